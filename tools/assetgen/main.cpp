// assetgen: writes the project's generated 3D assets with Assimp's exporter.
//
//   assetgen assets DIR    DIR/mf4/mf4.glb, DIR/site/container.glb, DIR/site/site.glb and the
//                          example robots as URDF packages, DIR/robots/<package>/ (committed)
//   assetgen formats DIR   the MF-4 model in every format the importer accepts, for tests:
//                          DIR/mf4.{gltf,glb,obj,fbx,dae} (y-up), DIR/mf4.3ds (z-up),
//                          DIR/mf4_zup.glb (z-up), DIR/mf4_binary.fbx (see writeFormats),
//                          DIR/mf4.stl (binary) and DIR/mf4_ascii.stl (z-up, no colours)
//   assetgen table         markdown table of the links' masses and inertias (for assets/README.md)
//
// glTF files are y-up by the glTF specification, so every node transform and vertex is converted
// (ours (x, y, z) → file (x, z, −y)); load them with `up: y`. The test set uses the same y-up
// scene in every format but 3DS, which is z-up by its own convention.
#include "geometry.h"
#include "models.h"
#include "robots.h"

#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/Exporter.hpp>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim::assetgen {
namespace {

namespace fs = std::filesystem;

// Our z-up frame to the file's frame: identity, or y-up (x, y, z) → (x, z, −y).
Vec3 toFile(const Vec3& v, bool yUp) {
  return yUp ? Vec3(v.x(), v.z(), -v.y()) : v;
}

aiVector3D toAi(const Vec3& v) {
  return aiVector3D(static_cast<ai_real>(v.x()), static_cast<ai_real>(v.y()),
                    static_cast<ai_real>(v.z()));
}

aiMaterial* makeMaterial(const Mesh& mesh) {
  auto* material = new aiMaterial();
  const aiString name(mesh.name);
  material->AddProperty(&name, AI_MATKEY_NAME);
  const aiColor4D colour(static_cast<ai_real>(mesh.colour.r), static_cast<ai_real>(mesh.colour.g),
                         static_cast<ai_real>(mesh.colour.b), static_cast<ai_real>(mesh.colour.a));
  material->AddProperty(&colour, 1, AI_MATKEY_COLOR_DIFFUSE);
  material->AddProperty(&colour, 1, AI_MATKEY_BASE_COLOR);
  const float metallic = 0.0f;
  const float roughness = 0.8f;
  material->AddProperty(&metallic, 1, AI_MATKEY_METALLIC_FACTOR);
  material->AddProperty(&roughness, 1, AI_MATKEY_ROUGHNESS_FACTOR);
  return material;
}

aiMesh* makeMesh(const Mesh& mesh, unsigned materialIndex, bool yUp) {
  auto* out = new aiMesh();
  out->mName = aiString(mesh.name);
  out->mPrimitiveTypes = aiPrimitiveType_TRIANGLE;
  out->mMaterialIndex = materialIndex;
  out->mNumVertices = static_cast<unsigned>(mesh.vertices.size());
  out->mVertices = new aiVector3D[out->mNumVertices];
  out->mNormals = new aiVector3D[out->mNumVertices];
  for (unsigned i = 0; i < out->mNumVertices; ++i) {
    out->mVertices[i] = toAi(toFile(mesh.vertices[i], yUp));
    out->mNormals[i] = toAi(toFile(mesh.normals[i], yUp));
  }
  out->mNumFaces = static_cast<unsigned>(mesh.triangles.size());
  out->mFaces = new aiFace[out->mNumFaces];
  for (unsigned f = 0; f < out->mNumFaces; ++f) {
    out->mFaces[f].mNumIndices = 3;
    out->mFaces[f].mIndices = new unsigned[3];
    for (int k = 0; k < 3; ++k) out->mFaces[f].mIndices[k] = mesh.triangles[f][k];
  }
  return out;
}

// A flat scene: root node "<model>_model", one child per link translated to the link's origin.
// A link's only mesh hangs on the link node; several meshes get one child node each, named after
// the mesh (glTF would otherwise merge them into one mesh of several primitives and lose names).
std::unique_ptr<aiScene> makeScene(const Model& model, bool yUp) {
  auto scene = std::make_unique<aiScene>();
  unsigned meshCount = 0;
  for (const Link& link : model.links) meshCount += static_cast<unsigned>(link.meshes.size());
  scene->mNumMeshes = meshCount;
  scene->mMeshes = new aiMesh*[meshCount];
  scene->mNumMaterials = meshCount;
  scene->mMaterials = new aiMaterial*[meshCount];
  scene->mRootNode = new aiNode(model.name + "_model");
  unsigned next = 0;
  // Adds a mesh and its material to the scene; returns its index.
  const auto addMesh = [&](const Mesh& mesh) {
    scene->mMaterials[next] = makeMaterial(mesh);
    scene->mMeshes[next] = makeMesh(mesh, next, yUp);
    return next++;
  };
  const auto attach = [](aiNode* parent, std::vector<aiNode*> children) {
    parent->mNumChildren = static_cast<unsigned>(children.size());
    parent->mChildren = new aiNode*[children.size()];
    for (std::size_t i = 0; i < children.size(); ++i) {
      children[i]->mParent = parent;
      parent->mChildren[i] = children[i];
    }
  };
  std::vector<aiNode*> linkNodes;
  for (const Link& link : model.links) {
    auto* node = new aiNode(link.name);
    aiMatrix4x4::Translation(toAi(toFile(link.origin, yUp)), node->mTransformation);
    if (link.meshes.size() == 1) {
      node->mNumMeshes = 1;
      node->mMeshes = new unsigned[1]{addMesh(link.meshes[0])};
    } else {
      std::vector<aiNode*> meshNodes;
      for (const Mesh& mesh : link.meshes) {
        auto* child = new aiNode(mesh.name);
        child->mNumMeshes = 1;
        child->mMeshes = new unsigned[1]{addMesh(mesh)};
        meshNodes.push_back(child);
      }
      attach(node, meshNodes);
    }
    linkNodes.push_back(node);
  }
  attach(scene->mRootNode, linkNodes);
  return scene;
}

void write(const Model& model, const std::string& formatId, const fs::path& path, bool yUp,
           unsigned preprocessing = 0) {
  fs::create_directories(path.parent_path());
  const auto scene = makeScene(model, yUp);
  Assimp::Exporter exporter;
  if (exporter.Export(scene.get(), formatId, path.string(), preprocessing) != AI_SUCCESS) {
    throw std::runtime_error(path.string() + ": export as " + formatId +
                             " failed: " + exporter.GetErrorString());
  }
  std::printf("wrote %s\n", path.string().c_str());
}

// A number as URDF files write them: shortest round trip of 9 significant digits, no "-0".
std::string num(double v) {
  if (v == 0.0) v = 0.0;
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string triple(const Vec3& v) {
  return num(v.x()) + " " + num(v.y()) + " " + num(v.z());
}

// Roll, pitch, yaw of a rotation R = Rz(yaw) Ry(pitch) Rx(roll) (URDF's convention).
Vec3 rpyOf(const Eigen::Matrix3d& r) {
  const double pitch = std::asin(std::clamp(-r(2, 0), -1.0, 1.0));
  return {std::atan2(r(2, 1), r(2, 2)), pitch, std::atan2(r(1, 0), r(0, 0))};
}

// <inertial>: the links' solids at uniform density. A tensor with products of inertia is
// written in its principal axes, turned by the origin's rpy (as CAD exporters may do).
std::string inertial(const RobotLink& link) {
  const MassProperties p = massProperties(link.meshes, link.mass);
  Eigen::Matrix3d axes = Eigen::Matrix3d::Identity();
  Vec3 moments = p.inertia.diagonal();
  const double largest = p.inertia.cwiseAbs().maxCoeff();
  if (std::abs(p.inertia(0, 1)) + std::abs(p.inertia(0, 2)) + std::abs(p.inertia(1, 2)) >
      1e-12 * largest) {
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(p.inertia);
    axes = eig.eigenvectors();
    if (axes.determinant() < 0.0) axes.col(2) *= -1.0;
    moments = eig.eigenvalues();
  }
  return "    <inertial>\n      <origin xyz=\"" + triple(p.com) + "\" rpy=\"" +
         triple(rpyOf(axes)) + "\"/>\n      <mass value=\"" + num(p.mass) +
         "\"/>\n      <inertia ixx=\"" + num(moments.x()) + "\" ixy=\"0\" ixz=\"0\" iyy=\"" +
         num(moments.y()) + "\" iyz=\"0\" izz=\"" + num(moments.z()) + "\"/>\n    </inertial>\n";
}

std::string urdfText(const Robot& robot) {
  const std::string meshes = "package://" + robot.package + "/meshes/";
  std::string t =
      "<?xml version=\"1.0\"?>\n<!-- " + robot.description +
      ".\n     Generated by tools/assetgen (robots.cpp): regenerate with `cmake --build "
      "build --target assets`. -->\n<robot name=\"" +
      robot.name + "\">\n";
  for (const RobotMaterial& m : robot.materials) {
    const Colour& c = m.colour;
    t += "  <material name=\"" + m.name + "\">\n    <color rgba=\"" + num(c.r) + " " + num(c.g) +
         " " + num(c.b) + " " + num(c.a) + "\"/>\n  </material>\n";
  }
  for (const RobotLink& link : robot.links) {
    if (link.mass <= 0.0) {
      t += "  <link name=\"" + link.name + "\"/>\n";
      continue;
    }
    const std::string file =
        meshes + (link.mesh_file.empty() ? link.name + ".stl" : link.mesh_file);
    const std::string scale =
        link.mesh_scale == Vec3::Ones() ? "" : " scale=\"" + triple(link.mesh_scale) + "\"";
    t += "  <link name=\"" + link.name + "\">\n" + inertial(link);
    t += "    <visual>\n      <geometry>\n        <mesh filename=\"" + file + "\"" + scale +
         "/>\n      </geometry>\n      <material name=\"" + link.material + "\"/>\n    </visual>\n";
    if (link.collision_boxes.empty()) {
      t += "    <collision>\n      <geometry>\n        <mesh filename=\"" + file + "\"" + scale +
           "/>\n      </geometry>\n    </collision>\n";
    }
    for (const auto& [pose, size] : link.collision_boxes) {
      t += "    <collision>\n      <origin xyz=\"" + triple(pose.translation()) + "\" rpy=\"" +
           triple(rpyOf(pose.linear())) + "\"/>\n      <geometry>\n        <box size=\"" +
           triple(size) + "\"/>\n      </geometry>\n    </collision>\n";
    }
    t += "  </link>\n";
  }
  for (const RobotJoint& j : robot.joints) {
    t += "  <joint name=\"" + j.name + "\" type=\"" + j.type + "\">\n    <origin xyz=\"" +
         triple(j.xyz) + "\" rpy=\"" + triple(j.rpy) + "\"/>\n    <parent link=\"" + j.parent +
         "\"/>\n    <child link=\"" + j.child + "\"/>\n";
    if (j.type != "fixed") {
      t += "    <axis xyz=\"" + triple(j.axis) + "\"/>\n    <limit ";
      if (j.type != "continuous")
        t += "lower=\"" + num(j.lower) + "\" upper=\"" + num(j.upper) + "\" ";
      t += "effort=\"" + num(j.effort) + "\" velocity=\"" + num(j.velocity) + "\"/>\n";
      t += "    <dynamics damping=\"" + num(j.damping) + "\" friction=\"" + num(j.friction) +
           "\"/>\n";
    }
    if (!j.mimic.empty()) {
      t += "    <mimic joint=\"" + j.mimic + "\" multiplier=\"" + num(j.multiplier) +
           "\" offset=\"0\"/>\n";
    }
    t += "  </joint>\n";
  }
  return t + "</robot>\n";
}

void writeText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error(path.string() + ": cannot write it");
  std::printf("wrote %s\n", path.string().c_str());
}

// A URDF package as ROS keeps one: package.xml (its <name> is what package:// resolves),
// urdf/<robot>.urdf and meshes/<link>.stl (binary STL, metres, the link frame).
void writeRobot(const Robot& robot, const fs::path& dir) {
  const fs::path pkg = dir / robot.package;
  writeText(pkg / "package.xml",
            "<?xml version=\"1.0\"?>\n<!-- Generated by tools/assetgen (robots.cpp). -->\n"
            "<package format=\"2\">\n  <name>" +
                robot.package +
                "</name>\n  <version>1.0.0</version>\n"
                "  <description>" +
                robot.description + "</description>\n</package>\n");
  for (const RobotLink& link : robot.links) {
    if (link.mass <= 0.0 || !link.mesh_file.empty()) continue;
    Link one{link.name, "", "static", Vec3::Zero(), Vec3::Zero(), 0.0, link.meshes};
    write(Model{link.name, {one}}, "stlb", pkg / "meshes" / (link.name + ".stl"), false);
  }
  writeText(pkg / "urdf" / (robot.name + ".urdf"), urdfText(robot));
}

void writeAssets(const fs::path& dir) {
  write(mf4Robot(), "glb2", dir / "mf4" / "mf4.glb", true);
  write(container(), "glb2", dir / "site" / "container.glb", true);
  write(site(), "glb2", dir / "site" / "site.glb", true);
  writeRobot(arm6(), dir / "robots");
  writeRobot(gripper(), dir / "robots");
}

void writeFormats(const fs::path& dir) {
  const Model robot = mf4Robot();
  write(robot, "gltf2", dir / "mf4.gltf", true);
  write(robot, "glb2", dir / "mf4.glb", true);
  write(robot, "obj", dir / "mf4.obj", true);
  write(robot, "collada", dir / "mf4.dae", true);
  // 3DS is z-up (3ds Max). Assimp 5.2's 3DS writer and reader disagree on node translations (they
  // come back negated), so the 3DS copy has them baked into the vertices: 3DS stores world-space
  // vertices anyway. Load it with `up: z`.
  write(robot, "3ds", dir / "mf4.3ds", false, aiProcess_PreTransformVertices);
  // Assimp 5.2 cannot read back its own binary FBX ("FBX-Tokenize ... block offset is out of
  // range"); its ASCII FBX round-trips.
  write(robot, "fbxa", dir / "mf4.fbx", true);
  write(robot, "fbx", dir / "mf4_binary.fbx", true);
  write(robot, "glb2", dir / "mf4_zup.glb", false);
  // STL (the usual format of URDF meshes): z-up by convention, geometry only.
  write(robot, "stlb", dir / "mf4.stl", false);
  write(robot, "stl", dir / "mf4_ascii.stl", false);
}

void printRow(const Link& link) {
  const MassProperties p = massProperties(link.meshes, link.mass);
  const Eigen::Matrix3d& i = p.inertia;
  std::printf("| `%s` | %.1f | [%.3f, %.3f, %.3f] | [%.4g, %.4g, %.4g] | [%.3g, %.3g, %.3g] |\n",
              link.name.c_str(), p.mass, p.com.x(), p.com.y(), p.com.z(), i(0, 0), i(1, 1), i(2, 2),
              i(0, 1), i(0, 2), i(1, 2));
}

void printTable() {
  // Off-diagonal entries are those of the inertia tensor (minus the products of inertia).
  std::printf(
      "| link | mass kg | centre of mass m (link frame) | "
      "Ixx, Iyy, Izz kg m² | Ixy, Ixz, Iyz kg m² |\n|---|---|---|---|---|\n");
  double total = 0.0;
  for (const Model& model : {mf4Robot(), container()}) {
    for (const Link& link : model.links) {
      printRow(link);
      if (model.name == "mf4") total += link.mass;
    }
  }
  std::printf("\nMF-4 total mass: %.1f kg\n", total);
}

int run(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "assets" && argc == 3) {
    writeAssets(argv[2]);
  } else if (command == "formats" && argc == 3) {
    writeFormats(argv[2]);
  } else if (command == "table" && argc == 2) {
    printTable();
  } else {
    std::fprintf(stderr, "usage: assetgen assets DIR | assetgen formats DIR | assetgen table\n");
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace sim::assetgen

int main(int argc, char** argv) {
  try {
    return sim::assetgen::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "assetgen: %s\n", e.what());
    return 1;
  }
}
