#include <render/body_graph.h>

#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Material>
#include <osg/PolygonMode>
#include <osg/Quat>
#include <osg/Shape>
#include <osg/ShapeDrawable>
#include <osg/Texture2D>
#include <osg/Uniform>
#include <osgDB/ReadFile>
#include <osgDB/Registry>

#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sim::render {

std::string TextureImage::describe() const {
  return encoded ? "embedded " + format + " image" : file;
}

namespace {

// Decodes each image once, however many parts use it; failures become warnings.
class TextureCache {
 public:
  explicit TextureCache(std::vector<std::string>& warnings) : warnings_(warnings) {}

  /// The texture of `image`, or null when it cannot be decoded.
  osg::Texture2D* get(const TextureImage& image) {
    const std::string key =
        image.encoded ? "#" + std::to_string(reinterpret_cast<std::uintptr_t>(image.encoded.get()))
                      : image.file;
    auto [it, inserted] = cache_.try_emplace(key);
    if (inserted) it->second = load(image);
    return it->second.get();
  }

 private:
  osg::ref_ptr<osg::Texture2D> load(const TextureImage& image) {
    osg::ref_ptr<osg::Image> decoded;
    if (image.encoded) {
      osgDB::ReaderWriter* reader =
          osgDB::Registry::instance()->getReaderWriterForExtension(image.format);
      if (reader != nullptr) {
        std::istringstream in(*image.encoded);
        decoded = reader->readImage(in).getImage();
      }
    } else {
      decoded = osgDB::readRefImageFile(image.file);
    }
    if (!decoded || decoded->s() <= 0 || decoded->t() <= 0) {
      warnings_.push_back("texture " + image.describe() +
                          " could not be read; the mesh is drawn in its colour");
      return nullptr;
    }
    osg::ref_ptr<osg::Texture2D> texture = new osg::Texture2D(decoded.get());
    texture->setWrap(osg::Texture::WRAP_S, osg::Texture::REPEAT);
    texture->setWrap(osg::Texture::WRAP_T, osg::Texture::REPEAT);
    texture->setFilter(osg::Texture::MIN_FILTER, osg::Texture::LINEAR_MIPMAP_LINEAR);
    texture->setFilter(osg::Texture::MAG_FILTER, osg::Texture::LINEAR);
    return texture;
  }

  std::vector<std::string>& warnings_;
  std::map<std::string, osg::ref_ptr<osg::Texture2D>> cache_;
};

// A static mesh part: geometry built once (vertex buffer objects), placed by a fixed transform.
// With uvs and a readable texture, the image on unit 0 (the shadow map uses unit 1).
osg::ref_ptr<osg::Node> meshNode(const MeshPart& part, TextureCache* textures = nullptr,
                                 bool* textured = nullptr) {
  osg::ref_ptr<osg::Vec3Array> vertices = new osg::Vec3Array;
  osg::ref_ptr<osg::Vec3Array> normals = new osg::Vec3Array;
  vertices->reserve(part.vertices_m.size());
  for (const auto& v : part.vertices_m) vertices->push_back(osg::Vec3(v[0], v[1], v[2]));
  for (const auto& n : part.normals) normals->push_back(osg::Vec3(n[0], n[1], n[2]));
  osg::ref_ptr<osg::Geometry> geometry = new osg::Geometry;
  geometry->setName(part.name);
  geometry->setUseVertexBufferObjects(true);
  geometry->setVertexArray(vertices.get());
  if (normals->size() == vertices->size()) {
    geometry->setNormalArray(normals.get(), osg::Array::BIND_PER_VERTEX);
  }
  osg::ref_ptr<osg::Vec4Array> colors = new osg::Vec4Array;
  const osg::Vec4 color(part.color_rgba[0], part.color_rgba[1], part.color_rgba[2],
                        part.color_rgba[3]);
  colors->push_back(color);
  geometry->setColorArray(colors.get(), osg::Array::BIND_OVERALL);
  geometry->addPrimitiveSet(
      new osg::DrawElementsUInt(GL_TRIANGLES, part.indices.begin(), part.indices.end()));
  if (textures != nullptr && !part.texture.empty() && !part.uvs.empty() &&
      part.uvs.size() == part.vertices_m.size()) {
    if (osg::Texture2D* texture = textures->get(part.texture)) {
      osg::ref_ptr<osg::Vec2Array> uvs = new osg::Vec2Array;
      uvs->reserve(part.uvs.size());
      for (const auto& uv : part.uvs) uvs->push_back(osg::Vec2(uv[0], uv[1]));
      geometry->setTexCoordArray(0, uvs.get(), osg::Array::BIND_PER_VERTEX);
      geometry->getOrCreateStateSet()->setTextureAttributeAndModes(0, texture);
      geometry->getOrCreateStateSet()->addUniform(new osg::Uniform("textured", true));
      if (textured != nullptr) *textured = true;
    }
  }
  // Lit with the material's colour (the fixed pipeline ignores vertex colours under lighting).
  osg::ref_ptr<osg::Material> material = new osg::Material;
  material->setDiffuse(osg::Material::FRONT_AND_BACK, color);
  material->setAmbient(osg::Material::FRONT_AND_BACK, color);
  material->setSpecular(osg::Material::FRONT_AND_BACK, osg::Vec4(0.15f, 0.15f, 0.15f, 1.0f));
  material->setShininess(osg::Material::FRONT_AND_BACK, 24.0f);
  geometry->getOrCreateStateSet()->setAttributeAndModes(material.get());
  if (part.color_rgba[3] < 1.0f) {
    geometry->getOrCreateStateSet()->setMode(GL_BLEND, osg::StateAttribute::ON);
    geometry->getOrCreateStateSet()->setRenderingHint(osg::StateSet::TRANSPARENT_BIN);
  }
  osg::ref_ptr<osg::Geode> geode = new osg::Geode;
  geode->setName(part.name);
  geode->addDrawable(geometry.get());
  osg::ref_ptr<osg::MatrixTransform> placed = new osg::MatrixTransform(poseMatrix(part.pose));
  placed->setName(part.name);
  placed->addChild(geode.get());
  return placed;
}

}  // namespace

BodyGraph::BodyGraph(std::span<const BodyVisual> bodies) : root_(new osg::Group) {
  root_->setName("bodies");
  // Closed meshes, counter-clockwise outside: back faces are never seen. Culling them also lets
  // the shadow pass draw back faces only (it flips the culled side), which keeps lit faces free
  // of self-shadowing speckle.
  root_->getOrCreateStateSet()->setMode(GL_CULL_FACE, osg::StateAttribute::ON);
  transforms_.reserve(bodies.size());
  TextureCache textures(warnings_);
  for (const BodyVisual& body : bodies) {
    // The transform changes every frame, so it is marked DYNAMIC (STYLE §6).
    osg::ref_ptr<osg::MatrixTransform> transform = new osg::MatrixTransform;
    transform->setName(body.name);
    transform->setDataVariance(osg::Object::DYNAMIC);
    const bool has_box =
        body.box_size_m[0] > 0.0 && body.box_size_m[1] > 0.0 && body.box_size_m[2] > 0.0;
    if (body.meshes.empty() && has_box) {
      // A box at the body origin (its centre of mass), sized in body axes.
      auto* box = new osg::Box(osg::Vec3(0.0f, 0.0f, 0.0f), static_cast<float>(body.box_size_m[0]),
                               static_cast<float>(body.box_size_m[1]),
                               static_cast<float>(body.box_size_m[2]));
      auto* drawable = new osg::ShapeDrawable(box);
      drawable->setColor(osg::Vec4(body.color_rgba[0], body.color_rgba[1], body.color_rgba[2],
                                   body.color_rgba[3]));
      auto* geode = new osg::Geode;
      geode->setName(body.name + ".shape");
      geode->addDrawable(drawable);
      transform->addChild(geode);
    }
    for (const MeshPart& part : body.meshes) {
      bool textured = false;
      transform->addChild(meshNode(part, &textures, &textured));
      if (textured) ++textured_parts_;
    }
    // Collision wireframes: unlit lines, hidden until the debug overlay shows them.
    osg::ref_ptr<osg::Group> wires = new osg::Group;
    wires->setName(body.name + ".collision");
    for (const MeshPart& part : body.collision) wires->addChild(meshNode(part));
    osg::StateSet* state = wires->getOrCreateStateSet();
    state->setAttributeAndModes(
        new osg::PolygonMode(osg::PolygonMode::FRONT_AND_BACK, osg::PolygonMode::LINE),
        osg::StateAttribute::ON | osg::StateAttribute::OVERRIDE);
    state->setMode(GL_LIGHTING, osg::StateAttribute::OFF | osg::StateAttribute::OVERRIDE);
    state->setMode(GL_CULL_FACE, osg::StateAttribute::OFF | osg::StateAttribute::OVERRIDE);
    wires->setNodeMask(0);
    transform->addChild(wires.get());
    collision_.push_back(wires);
    root_->addChild(transform.get());
    transforms_.push_back(transform);
  }
}

void BodyGraph::setCollisionVisible(bool visible) {
  for (const auto& wires : collision_) wires->setNodeMask(visible ? ~0u : 0u);
}

void BodyGraph::update(std::span<const BodyPose> poses) {
  if (poses.size() != transforms_.size()) {
    throw std::invalid_argument("BodyGraph::update: " + std::to_string(poses.size()) +
                                " poses for " + std::to_string(transforms_.size()) + " bodies");
  }
  for (std::size_t i = 0; i < poses.size(); ++i) {
    transforms_[i]->setMatrix(poseMatrix(poses[i]));
  }
}

osg::Matrixd poseMatrix(const BodyPose& pose) {
  // osg::Quat takes (x, y, z, w).
  const osg::Quat rotation(pose.orientation_wxyz[1], pose.orientation_wxyz[2],
                           pose.orientation_wxyz[3], pose.orientation_wxyz[0]);
  osg::Matrixd matrix;
  matrix.makeRotate(rotation);
  matrix.setTrans(pose.position_m[0], pose.position_m[1], pose.position_m[2]);
  return matrix;
}

}  // namespace sim::render
