// Model files through Assimp (see engine/include/engine/mesh_import.h for the contract).
//
// Frames. Assimp gives each node a local 4x4 transform (float); we accumulate global transforms
// G in double. The conversion into our frame is C = s·R_up (R_up = +90° about x for a y-up file,
// identity for z-up). Without a node filter a vertex v of a mesh placed by node m becomes
// C·G_m·v. With a filter on node n, whose global transform splits into a rigid part N = T·R and a
// remaining scale, the link frame in our model frame is C·N·C⁻¹ (rigid: a rotation conjugated by
// R_up and a scaled translation), and a vertex in that frame is (C·N·C⁻¹)⁻¹·C·G_m·v = C·N⁻¹·G_m·v.
// So the file's node frames are read as authored in the file's own axes (how Blender and other
// tools export a y-up file: every node converted, not one rotation at the root).
//
// "As stored". Every format is read with the numbers as stored in the file, so that `scale` and
// `up` are the conversions: COLLADA's <up_axis> is ignored (an Assimp option; its <unit> is always
// applied by Assimp 5.2, which has no option against it), and
// Assimp's 3DS reader, which rotates the whole scene from 3ds Max's z-up to y-up at the root
// ((x, y, z) → (x, z, −y), 3DSConverter.cpp, GenerateNodeGraph), is undone by the inverse
// rotation F; G above always means F·(Assimp's global transform).
#include <engine/mesh_import.h>

#include "isolated_call.h"

#include <assimp/DefaultIOSystem.h>
#include <assimp/config.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <Eigen/Geometry>
#include <assimp/Importer.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <new>
#include <numbers>
#include <set>
#include <system_error>
#include <utility>

namespace sim::engine {
namespace {

namespace fs = std::filesystem;

std::string lowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// True when `path` lies in `root` or below it (both already absolute and normalised).
bool isInside(const fs::path& path, const fs::path& root) {
  const auto [rootEnd, pathIt] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  (void)pathIt;
  return rootEnd == root.end();
}

// Assimp opens the model and everything it references through this: each distinct file must lie
// under the model's directory, and all of them together must fit the byte budget. A refusal is
// remembered so the error message can say why, not just "cannot open".
class GuardedIOSystem : public Assimp::DefaultIOSystem {
 public:
  GuardedIOSystem(fs::path root, std::uint64_t budgetBytes)
      : root_(std::move(root)), budget_(budgetBytes) {}

  Assimp::IOStream* Open(const char* file, const char* mode) override {
    if (mode == nullptr || std::string_view(mode).find_first_of("wa+") != std::string_view::npos) {
      return refuse(std::string("refused to open \"") + file + "\" for writing");
    }
    std::error_code ec;
    const fs::path resolved = fs::weakly_canonical(fs::absolute(file, ec), ec);
    if (ec || !isInside(resolved, root_)) {
      return refuse(std::string("refused to read \"") + file +
                    "\": referenced files must lie in the model's directory");
    }
    if (!opened_.contains(resolved.string())) {
      const auto size = fs::file_size(resolved, ec);
      if (!ec && used_ + size > budget_) {
        return refuse("\"" + std::string(file) + "\" brings the total to " +
                      std::to_string(used_ + size) + " bytes, more than the limit of " +
                      std::to_string(budget_));
      }
      if (!ec) used_ += size;
      opened_.insert(resolved.string());
    }
    return DefaultIOSystem::Open(file, mode);
  }

  const std::string& refusal() const { return refusal_; }

 private:
  Assimp::IOStream* refuse(std::string why) {
    if (refusal_.empty()) refusal_ = std::move(why);
    return nullptr;
  }

  fs::path root_;
  std::uint64_t budget_;
  std::uint64_t used_ = 0;
  std::set<std::string> opened_;
  std::string refusal_;
};

// Checks done before Assimp sees the file: extension, existence, kind, size, options.
void checkBeforeReading(const std::string& path, const MeshImportOptions& options) {
  const std::string ext = lowerCase(fs::path(path).extension().string());
  const auto& accepted = acceptedMeshExtensions();
  if (std::find(accepted.begin(), accepted.end(), ext) == accepted.end()) {
    std::string list;
    for (const auto a : accepted) list += (list.empty() ? "" : " ") + std::string(a);
    throw MeshImportError(path,
                          "unsupported model format \"" + ext + "\" (accepted: " + list + ")");
  }
  if (!std::isfinite(options.scale) || options.scale <= 0.0) {
    throw MeshImportError(
        path, "scale must be finite and positive, got " + std::to_string(options.scale));
  }
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw MeshImportError(path, "file not found");
  if (!fs::is_regular_file(status)) throw MeshImportError(path, "not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw MeshImportError(path, "cannot read its size: " + ec.message());
  if (size == 0) throw MeshImportError(path, "file is empty");
  if (size > options.max_file_bytes) {
    throw MeshImportError(path, "file is " + std::to_string(size) +
                                    " bytes, more than the limit of " +
                                    std::to_string(options.max_file_bytes));
  }
}

// Owns the Assimp importer for one read; the scene lives as long as this object.
class Reader {
 public:
  Reader(const std::string& path, const MeshImportOptions& options) {
    checkBeforeReading(path, options);
    std::error_code ec;
    const fs::path root = fs::weakly_canonical(fs::absolute(path, ec), ec).parent_path();
    if (ec) throw MeshImportError(path, "cannot resolve its directory: " + ec.message());
    auto* io = new GuardedIOSystem(root, options.max_file_bytes);
    importer_.SetIOHandler(io);  // the importer owns and deletes it
    // Drop points and lines after triangulation: we want surfaces only.
    importer_.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE,
                                 aiPrimitiveType_POINT | aiPrimitiveType_LINE);
    // Coordinates as stored; the caller states the up axis and units explicitly.
    importer_.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
    importer_.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
    const unsigned flags = aiProcess_ValidateDataStructure | aiProcess_Triangulate |
                           aiProcess_JoinIdenticalVertices | aiProcess_GenSmoothNormals |
                           aiProcess_SortByPType;
    try {
      scene_ = importer_.ReadFile(path, flags);
    } catch (const std::exception& e) {
      throw MeshImportError(path, std::string("Assimp failed: ") + e.what());
    }
    if (scene_ == nullptr) {
      std::string why = importer_.GetErrorString();
      if (!io->refusal().empty()) why = io->refusal() + " (Assimp: " + why + ")";
      throw MeshImportError(path, "Assimp could not read it: " + why);
    }
    if ((scene_->mFlags & AI_SCENE_FLAGS_INCOMPLETE) != 0) {
      throw MeshImportError(path, "Assimp read it only partly (scene flagged incomplete)");
    }
    if (scene_->mRootNode == nullptr) throw MeshImportError(path, "the file has no node tree");
  }

  const aiScene& scene() const { return *scene_; }

 private:
  Assimp::Importer importer_;
  const aiScene* scene_ = nullptr;
};

Eigen::Affine3d toEigen(const aiMatrix4x4& m) {
  Eigen::Matrix4d out;
  out << m.a1, m.a2, m.a3, m.a4, m.b1, m.b2, m.b3, m.b4, m.c1, m.c2, m.c3, m.c4, m.d1, m.d2, m.d3,
      m.d4;
  return Eigen::Affine3d(out);
}

// The conversion C = s·R_up from the file's axes and units to ours.
Eigen::Matrix3d fileToOurs(const MeshImportOptions& options) {
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  if (options.up == UpAxis::Y)
    rotation = Eigen::AngleAxisd(std::numbers::pi / 2, Eigen::Vector3d::UnitX());
  return options.scale * rotation;
}

const aiNode* findNode(const aiNode* node, const std::string& name) {
  if (name == node->mName.C_Str()) return node;
  for (unsigned i = 0; i < node->mNumChildren; ++i) {
    if (const aiNode* hit = findNode(node->mChildren[i], name)) return hit;
  }
  return nullptr;
}

// F: undoes the rotation a format's Assimp reader applies to the whole scene (see the top).
Eigen::Affine3d asStored(const std::string& path) {
  Eigen::Affine3d fix = Eigen::Affine3d::Identity();
  if (lowerCase(fs::path(path).extension().string()) == ".3ds") {
    fix.linear() = Eigen::AngleAxisd(std::numbers::pi / 2, Eigen::Vector3d::UnitX()).matrix();
  }
  return fix;
}

// G = F·(product of local transforms from the root down to `node`); F alone for no node.
Eigen::Affine3d globalTransform(const aiNode* node, const Eigen::Affine3d& fix) {
  Eigen::Affine3d g = Eigen::Affine3d::Identity();
  for (; node != nullptr; node = node->mParent) g = toEigen(node->mTransformation) * g;
  return fix * g;
}

void collectNames(const aiNode* node, std::vector<std::string>& names) {
  names.emplace_back(node->mName.C_Str());
  for (unsigned i = 0; i < node->mNumChildren; ++i) collectNames(node->mChildren[i], names);
}

MeshMaterial readMaterial(const std::string& path, const aiMaterial* material,
                          const fs::path& modelDir) {
  MeshMaterial out;
  if (material == nullptr) return out;
  aiColor4D colour;
  if (material->Get(AI_MATKEY_BASE_COLOR, colour) == AI_SUCCESS ||
      material->Get(AI_MATKEY_COLOR_DIFFUSE, colour) == AI_SUCCESS) {
    out.diffuse = {colour.r, colour.g, colour.b, colour.a};
  }
  float opacity = 1.0f;
  if (material->Get(AI_MATKEY_OPACITY, opacity) == AI_SUCCESS) out.diffuse[3] *= opacity;
  for (double& c : out.diffuse) c = std::isfinite(c) ? std::clamp(c, 0.0, 1.0) : 1.0;
  aiString texture;
  if (material->GetTexture(aiTextureType_BASE_COLOR, 0, &texture) == AI_SUCCESS ||
      material->GetTexture(aiTextureType_DIFFUSE, 0, &texture) == AI_SUCCESS) {
    const std::string text = texture.C_Str();
    if (!text.empty() && text[0] == '*') {
      out.texture = text;
    } else if (!text.empty()) {
      // Like the model's other files, a texture must lie in its directory or below. Whether it
      // can be decoded is the render's business (a bad image is drawn as the plain colour).
      const fs::path file = (modelDir / text).lexically_normal();
      const fs::path relative = file.lexically_relative(modelDir.lexically_normal());
      if (relative.empty() || *relative.begin() == ".." || fs::path(text).is_absolute()) {
        throw MeshImportError(path, "texture \"" + text +
                                        "\" is outside the model's directory (referenced files "
                                        "must lie in the model's directory or below it)");
      }
      out.texture = file.string();
    }
  }
  return out;
}

Vec3d toVec(const Eigen::Vector3d& v) {
  return {v.x(), v.y(), v.z()};
}

// One mesh instance under `transform` (file coordinates to output frame).
ImportedMesh convertMesh(const std::string& path, const aiScene& scene, const aiMesh& mesh,
                         const aiNode& node, const Eigen::Affine3d& transform,
                         const fs::path& modelDir) {
  ImportedMesh out;
  out.node = node.mName.C_Str();
  out.name = mesh.mName.length > 0 ? std::string(mesh.mName.C_Str()) : out.node;
  if (mesh.mMaterialIndex < scene.mNumMaterials) {
    out.material = readMaterial(path, scene.mMaterials[mesh.mMaterialIndex], modelDir);
  }
  // Normals go through the inverse transpose; a mirroring transform flips the winding.
  const Eigen::Matrix3d linear = transform.linear();
  const Eigen::Matrix3d normalMatrix = linear.inverse().transpose();
  const bool mirrored = linear.determinant() < 0.0;
  out.vertices.reserve(mesh.mNumVertices);
  out.normals.reserve(mesh.mNumVertices);
  for (unsigned i = 0; i < mesh.mNumVertices; ++i) {
    const aiVector3D& v = mesh.mVertices[i];
    const Eigen::Vector3d p = transform * Eigen::Vector3d(v.x, v.y, v.z);
    if (!p.allFinite()) {
      throw MeshImportError(path, "mesh \"" + out.name + "\" has a non-finite vertex");
    }
    out.vertices.push_back(toVec(p));
    Eigen::Vector3d n = Eigen::Vector3d::UnitZ();  // fallback for missing or degenerate normals
    if (mesh.mNormals != nullptr) {
      const aiVector3D& a = mesh.mNormals[i];
      const Eigen::Vector3d m = normalMatrix * Eigen::Vector3d(a.x, a.y, a.z);
      if (m.allFinite() && m.norm() > 1e-12) n = m.normalized();
    }
    out.normals.push_back(toVec(n));
    if (mesh.HasTextureCoords(0)) {
      const aiVector3D& t = mesh.mTextureCoords[0][i];
      const bool finite = std::isfinite(t.x) && std::isfinite(t.y);
      out.uvs.push_back({finite ? t.x : 0.0, finite ? t.y : 0.0});
    }
  }
  out.triangles.reserve(mesh.mNumFaces);
  for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
    const aiFace& face = mesh.mFaces[f];
    if (face.mNumIndices != 3) continue;  // SortByPType removed the rest; be safe anyway
    std::array<std::uint32_t, 3> tri{face.mIndices[0], face.mIndices[1], face.mIndices[2]};
    if (tri[0] >= mesh.mNumVertices || tri[1] >= mesh.mNumVertices || tri[2] >= mesh.mNumVertices) {
      throw MeshImportError(path, "mesh \"" + out.name + "\" has a vertex index out of range");
    }
    if (mirrored) std::swap(tri[1], tri[2]);
    out.triangles.push_back(tri);
  }
  return out;
}

// Depth-first over the subtree: every mesh instance with C·base·G_local accumulated.
void collectMeshes(const std::string& path, const aiScene& scene, const aiNode& node,
                   const Eigen::Affine3d& parent, const fs::path& modelDir,
                   std::vector<ImportedMesh>& out) {
  const Eigen::Affine3d transform = parent * toEigen(node.mTransformation);
  for (unsigned i = 0; i < node.mNumMeshes; ++i) {
    const unsigned index = node.mMeshes[i];
    if (index >= scene.mNumMeshes || scene.mMeshes[index] == nullptr) continue;
    ImportedMesh mesh = convertMesh(path, scene, *scene.mMeshes[index], node, transform, modelDir);
    if (mesh.triangles.empty()) continue;
    if (mesh.name.empty()) mesh.name = mesh.node + "#" + std::to_string(out.size());
    out.push_back(std::move(mesh));
  }
  for (unsigned i = 0; i < node.mNumChildren; ++i) {
    collectMeshes(path, scene, *node.mChildren[i], transform, modelDir, out);
  }
}

std::string knownNodes(const aiNode* root) {
  std::vector<std::string> names;
  collectNames(root, names);
  std::string list;
  const std::size_t shown = std::min<std::size_t>(names.size(), 20);
  for (std::size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + names[i];
  if (shown < names.size()) list += ", ... (" + std::to_string(names.size()) + " in all)";
  return list;
}

}  // namespace

MeshImportError::MeshImportError(std::string path, std::string message)
    : std::runtime_error(path + ": " + message),
      path_(std::move(path)),
      message_(std::move(message)) {}

void Aabb::add(const Vec3d& p) {
  for (int i = 0; i < 3; ++i) {
    min[i] = std::min(min[i], p[i]);
    max[i] = std::max(max[i], p[i]);
  }
}

std::size_t ImportedModel::vertexCount() const {
  std::size_t n = 0;
  for (const auto& mesh : meshes) n += mesh.vertices.size();
  return n;
}

std::size_t ImportedModel::triangleCount() const {
  std::size_t n = 0;
  for (const auto& mesh : meshes) n += mesh.triangles.size();
  return n;
}

std::vector<Vec3d> ImportedModel::allVertices() const {
  std::vector<Vec3d> out;
  out.reserve(vertexCount());
  for (const auto& mesh : meshes) out.insert(out.end(), mesh.vertices.begin(), mesh.vertices.end());
  return out;
}

Aabb ImportedModel::bounds() const {
  Aabb box;
  for (const auto& mesh : meshes) {
    for (const auto& v : mesh.vertices) box.add(v);
  }
  return box;
}

const std::vector<std::string_view>& acceptedMeshExtensions() {
  static const std::vector<std::string_view> kAccepted{".gltf", ".glb", ".obj", ".3ds",
                                                       ".fbx",  ".dae", ".stl"};
  return kAccepted;
}

namespace {

ImportedModel importInProcess(const std::string& path, const MeshImportOptions& options) {
  const Reader reader(path, options);
  const aiScene& scene = reader.scene();
  const fs::path modelDir = fs::path(path).parent_path();

  // Start node and the transform from its parent's file frame to the output frame.
  const aiNode* start = scene.mRootNode;
  const Eigen::Matrix3d convert = fileToOurs(options);
  const Eigen::Affine3d fix = asStored(path);
  Eigen::Affine3d base = Eigen::Affine3d::Identity();
  base.linear() = convert;
  base = base * fix;
  ImportedModel model;
  model.path = path;
  if (!options.node.empty()) {
    start = findNode(scene.mRootNode, options.node);
    if (start == nullptr) {
      throw MeshImportError(path, "no node named \"" + options.node +
                                      "\" (nodes: " + knownNodes(scene.mRootNode) + ")");
    }
    // Rigid part N of the node's global transform; output = C·N⁻¹·G_parent·(local ...).
    const Eigen::Affine3d global = globalTransform(start, fix);
    Eigen::Matrix3d rotation;
    Eigen::Matrix3d scaling;
    global.computeRotationScaling(&rotation, &scaling);
    Eigen::Affine3d rigid = Eigen::Affine3d::Identity();
    rigid.linear() = rotation;
    rigid.translation() = global.translation();
    base = Eigen::Affine3d(convert) * rigid.inverse() * globalTransform(start->mParent, fix);
    // The link frame in our model frame: C·N·C⁻¹.
    const Eigen::Matrix3d frameRotation = (convert * rotation * convert.inverse()).eval();
    const Eigen::Quaterniond q(frameRotation);
    model.frame.position = toVec(convert * global.translation());
    model.frame.rotation = {q.w(), q.x(), q.y(), q.z()};
  }
  collectMeshes(path, scene, *start, base, modelDir, model.meshes);
  model.embedded_textures.resize(scene.mNumTextures);
  for (unsigned i = 0; i < scene.mNumTextures; ++i) {
    const aiTexture* texture = scene.mTextures[i];
    if (texture == nullptr || texture->mHeight != 0 || texture->pcData == nullptr) continue;
    // Compressed: mWidth is the byte count, achFormatHint the extension.
    model.embedded_textures[i].format = texture->achFormatHint;
    model.embedded_textures[i].bytes.assign(reinterpret_cast<const char*>(texture->pcData),
                                            texture->mWidth);
  }
  if (model.meshes.empty()) {
    throw MeshImportError(path, options.node.empty()
                                    ? "the file has no triangle mesh"
                                    : "node \"" + options.node + "\" has no triangle mesh");
  }
  return model;
}

std::vector<std::string> namesInProcess(const std::string& path, const MeshImportOptions& options) {
  const Reader reader(path, options);
  std::vector<std::string> names;
  collectNames(reader.scene().mRootNode, names);
  return names;
}

// Bytes from the child: 'K' and the result, or 'E' and a MeshImportError's message.
class ByteWriter {
 public:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  void raw(const void* data, std::size_t n) { out_.append(static_cast<const char*>(data), n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& in) : in_(in) {}
  std::uint64_t u64() {
    std::uint64_t v;
    raw(&v, sizeof v);
    return v;
  }
  double f64() {
    double v;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    const std::uint64_t n = count(1);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  /// A count of items of `itemBytes` each that must fit in what is left.
  std::uint64_t count(std::uint64_t itemBytes) {
    const std::uint64_t n = u64();
    if (n > (in_.size() - at_) / itemBytes) throw std::runtime_error("truncated result");
    return n;
  }
  void raw(void* data, std::size_t n) {
    if (in_.size() - at_ < n) throw std::runtime_error("truncated result");
    std::memcpy(data, in_.data() + at_, n);
    at_ += n;
  }

 private:
  const std::string& in_;
  std::size_t at_ = 0;
};

void writeVec(ByteWriter& w, const Vec3d& v) {
  for (const double x : v) w.f64(x);
}

Vec3d readVec(ByteReader& r) {
  return {r.f64(), r.f64(), r.f64()};
}

std::string serialize(const ImportedModel& model) {
  ByteWriter w;
  for (const double x : model.frame.position) w.f64(x);
  for (const double x : model.frame.rotation) w.f64(x);
  w.u64(model.meshes.size());
  for (const auto& mesh : model.meshes) {
    w.str(mesh.name);
    w.str(mesh.node);
    w.u64(mesh.vertices.size());
    for (std::size_t i = 0; i < mesh.vertices.size(); ++i) {
      writeVec(w, mesh.vertices[i]);
      writeVec(w, mesh.normals[i]);
    }
    w.u64(mesh.triangles.size());
    w.raw(mesh.triangles.data(), mesh.triangles.size() * sizeof mesh.triangles[0]);
    for (const double c : mesh.material.diffuse) w.f64(c);
    w.str(mesh.material.texture);
    w.u64(mesh.uvs.size());
    for (const auto& uv : mesh.uvs) {
      w.f64(uv[0]);
      w.f64(uv[1]);
    }
  }
  w.u64(model.embedded_textures.size());
  for (const auto& texture : model.embedded_textures) {
    w.str(texture.format);
    w.str(texture.bytes);
  }
  return w.take();
}

ImportedModel deserialize(const std::string& bytes, std::size_t offset) {
  const std::string body = bytes.substr(offset);
  ByteReader r(body);
  ImportedModel model;
  for (double& x : model.frame.position) x = r.f64();
  for (double& x : model.frame.rotation) x = r.f64();
  model.meshes.resize(r.count(1));
  for (auto& mesh : model.meshes) {
    mesh.name = r.str();
    mesh.node = r.str();
    const std::uint64_t vertices = r.count(6 * sizeof(double));
    mesh.vertices.resize(vertices);
    mesh.normals.resize(vertices);
    for (std::size_t i = 0; i < vertices; ++i) {
      mesh.vertices[i] = readVec(r);
      mesh.normals[i] = readVec(r);
    }
    mesh.triangles.resize(r.count(sizeof mesh.triangles[0]));
    r.raw(mesh.triangles.data(), mesh.triangles.size() * sizeof mesh.triangles[0]);
    for (double& c : mesh.material.diffuse) c = r.f64();
    mesh.material.texture = r.str();
    mesh.uvs.resize(r.count(2 * sizeof(double)));
    for (auto& uv : mesh.uvs) uv = {r.f64(), r.f64()};
  }
  model.embedded_textures.resize(r.count(16));
  for (auto& texture : model.embedded_textures) {
    texture.format = r.str();
    texture.bytes = r.str();
  }
  return model;
}

std::string serialize(const std::vector<std::string>& names) {
  ByteWriter w;
  w.u64(names.size());
  for (const auto& name : names) w.str(name);
  return w.take();
}

std::vector<std::string> deserializeNames(const std::string& bytes, std::size_t offset) {
  const std::string body = bytes.substr(offset);
  ByteReader r(body);
  std::vector<std::string> names(r.count(8));
  for (auto& name : names) name = r.str();
  return names;
}

// Runs `read` (which returns T) per options.isolate: in this process, or in a limited child whose
// result crosses back as bytes. Errors come back as MeshImportError naming `path`.
template <typename T, typename Read, typename Serialize, typename Deserialize>
T readGuarded(const std::string& path, const MeshImportOptions& options, Read read,
              Serialize serializeResult, Deserialize deserializeResult) {
  checkBeforeReading(path, options);  // cheap refusals without a child process
  if (!options.isolate) {
    try {
      return read(path, options);
    } catch (const MeshImportError&) {
      throw;
    } catch (const std::exception& e) {
      throw MeshImportError(path, std::string("reading failed: ") + e.what());
    }
  }
  const auto work = [&]() -> std::string {
    try {
      return "K" + serializeResult(read(path, options));
    } catch (const MeshImportError& e) {
      return "E" + e.message();
    } catch (const std::bad_alloc&) {
      return "Eout of memory while reading (limit " +
             std::to_string(options.max_memory_bytes >> 20) + " MiB)";
    } catch (const std::exception& e) {
      return std::string("Ereading failed: ") + e.what();
    }
  };
  std::string bytes;
  try {
    bytes = detail::runIsolated(work, {options.max_memory_bytes, options.max_seconds});
  } catch (const detail::IsolationFailure& e) {
    throw MeshImportError(path, e.what());
  }
  if (!bytes.empty() && bytes[0] == 'E') throw MeshImportError(path, bytes.substr(1));
  try {
    if (bytes.empty() || bytes[0] != 'K') throw std::runtime_error("empty result");
    return deserializeResult(bytes, 1);
  } catch (const std::exception& e) {
    throw MeshImportError(path,
                          std::string("the reader process returned a bad result: ") + e.what());
  }
}

}  // namespace

ImportedModel importMesh(const std::string& path, const MeshImportOptions& options) {
  ImportedModel model = readGuarded<ImportedModel>(
      path, options, importInProcess, [](const ImportedModel& m) { return serialize(m); },
      deserialize);
  model.path = path;
  return model;
}

std::vector<std::string> meshNodeNames(const std::string& path, const MeshImportOptions& options) {
  return readGuarded<std::vector<std::string>>(
      path, options, namesInProcess, [](const std::vector<std::string>& n) { return serialize(n); },
      deserializeNames);
}

}  // namespace sim::engine
