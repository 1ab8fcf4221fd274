// Textures from model files, end to end: an OBJ with a material whose map_Kd is a PNG goes
// through Assimp (texture coordinates, texture path), the scene's snapshot and the render; the
// picture shows the image's colours where the texture coordinates put them. The PNG is written
// by osgDB and read back through osgDB's plugin, both real.
#include <dynamics/simulator.h>
#include <engine/scene.h>
#include <engine/snapshot.h>
#include <render/view.h>

#include <osg/Image>
#include <osgDB/WriteFile>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace sim {
namespace {

namespace fs = std::filesystem;

// A 1 m × 1 m board standing in the xz plane facing -y, u along x and v along z.
const char* kBoardObj = R"(mtllib board.mtl
v -0.5 0 0
v 0.5 0 0
v 0.5 0 1
v -0.5 0 1
vt 0 0
vt 1 0
vt 1 1
vt 0 1
vn 0 -1 0
usemtl painted
f 1/1/1 2/2/1 3/3/1
f 1/1/1 3/3/1 4/4/1
)";

// The same board as a glTF whose image is embedded (a data URI: Assimp hands it over as an
// embedded texture, "*0"): a 4 × 1 PNG, two red texels then two blue ones. Made by a few lines of
// Python (zlib, struct, base64); the buffer holds positions, normals, uvs and indices.
const char* kBoardGltf =
    R"GLTF({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
 "nodes": [{"mesh": 0, "name": "board"}],
 "meshes": [{"name": "board", "primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2}, "indices": 3, "material": 0}]}],
 "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "baseColorTexture": {"index": 0}}}],
 "textures": [{"source": 0}],
 "images": [{"uri": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAQAAAABCAIAAAB2XpiaAAAAEElEQVR4nGO4IyICRGDiDgAadQQRz7BC6AAAAABJRU5ErkJggg=="}],
 "buffers": [{"byteLength": 140, "uri": "data:application/octet-stream;base64,AAAAvwAAAAAAAAAAAAAAPwAAAAAAAAAAAAAAPwAAAAAAAIA/AAAAvwAAAAAAAIA/AAAAAAAAgL8AAAAAAAAAAAAAgL8AAAAAAAAAAAAAgL8AAAAAAAAAAAAAgL8AAAAAAAAAAAAAgD8AAIA/AACAPwAAgD8AAAAAAAAAAAAAAAAAAAEAAgAAAAIAAwA="}],
 "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 48},
                 {"buffer": 0, "byteOffset": 96, "byteLength": 32}, {"buffer": 0, "byteOffset": 128, "byteLength": 12}],
 "accessors": [{"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-0.5, 0, 0], "max": [0.5, 0, 1]},
               {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC3"},
               {"bufferView": 2, "componentType": 5126, "count": 4, "type": "VEC2"},
               {"bufferView": 3, "componentType": 5123, "count": 6, "type": "SCALAR"}]})GLTF";

// 64 × 64: the left half (u < 0.5) red, the right half blue.
void writeHalves(const fs::path& path) {
  osg::ref_ptr<osg::Image> image = new osg::Image;
  image->allocateImage(64, 64, 1, GL_RGB, GL_UNSIGNED_BYTE);
  for (int t = 0; t < 64; ++t) {
    for (int s = 0; s < 64; ++s) {
      unsigned char* p = image->data(s, t);
      p[0] = s < 32 ? 220 : 20;
      p[1] = 20;
      p[2] = s < 32 ? 20 : 220;
    }
  }
  ASSERT_TRUE(osgDB::writeImageFile(*image, path.string()));
}

class Texture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("simtrainer_texture_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "board.obj") << kBoardObj;
    writeHalves(dir_ / "halves.png");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The board under a white material with `map_kd` (empty: none), seen square on.
  render::RgbImage picture(const std::string& map_kd, render::SceneView** keep = nullptr,
                           const std::string& model = "board.obj") {
    std::ofstream(dir_ / "board.mtl") << "newmtl painted\nKd 1 1 1\n"
                                      << (map_kd.empty() ? "" : "map_Kd " + map_kd + "\n");
    const engine::Scene scene = engine::loadSceneFromString(
        "bodies:\n  - {name: ground, static: true, shapes: [{type: plane}]}\n"
        "  - {name: board, static: true, position: [0, 0, 0.2], visual: {file: " +
            (dir_ / model).string() + "}}\n",
        "texture_test.yaml");
    visuals_ = engine::bodyVisuals(scene);
    dynamics::Simulator sim(scene.model);
    poses_ = engine::bodyPoses(sim.initialState());
    render::ViewOptions options;
    options.width = 200;
    options.height = 200;
    options.offscreen = true;
    view_ = std::make_unique<render::SceneView>(visuals_, options);
    render::ViewCamera camera;
    camera.eye_m = {0.0, -2.5, 0.7};
    camera.target_m = {0.0, 0.0, 0.7};
    view_->setCamera(camera);
    if (keep != nullptr) *keep = view_.get();
    return view_->capture(poses_);
  }

  // The pixel where the board's point (x, z) in body coordinates projects.
  const std::uint8_t* at(const render::RgbImage& image, double x, double z) const {
    const auto p = view_->project({x, 0.0, 0.2 + z});
    return image.pixel(static_cast<int>(p[0]), static_cast<int>(p[1]));
  }

  fs::path dir_;
  std::vector<render::BodyVisual> visuals_;
  std::vector<render::BodyPose> poses_;
  std::unique_ptr<render::SceneView> view_;
};

TEST_F(Texture, ImageColoursLandWhereTheTextureCoordinatesPutThem) {
  render::SceneView* view = nullptr;
  const render::RgbImage image = picture("halves.png", &view);
  ASSERT_EQ(visuals_[1].meshes.size(), 1u);
  EXPECT_EQ(visuals_[1].meshes[0].uvs.size(), 4u);
  EXPECT_EQ(view->bodies().texturedParts(), 1u);
  EXPECT_TRUE(view->bodies().warnings().empty());
  // Lit square on, a white material times the image: red on the left, blue on the right, at
  // several heights (v does not change the colour). Channel margins of 3× leave room for the
  // lighting's shade and the sky's tint without letting an untextured grey pass.
  for (const double z : {0.2, 0.5, 0.8}) {
    const std::uint8_t* left = at(image, -0.25, z);
    const std::uint8_t* right = at(image, 0.25, z);
    SCOPED_TRACE(z);
    EXPECT_GT(left[0], 3 * left[2]);
    EXPECT_GT(right[2], 3 * right[0]);
  }
}

TEST_F(Texture, WithoutAMapTheBoardIsPlain) {
  const render::RgbImage image = picture("");
  const std::uint8_t* left = at(image, -0.25, 0.5);
  const std::uint8_t* right = at(image, 0.25, 0.5);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(left[c], right[c], 2) << "channel " << c;
}

TEST_F(Texture, AnUnreadableImageIsAWarningNotAFailure) {
  std::ofstream(dir_ / "broken.png") << "not a png";
  render::SceneView* view = nullptr;
  const render::RgbImage image = picture("broken.png", &view);
  EXPECT_EQ(view->bodies().texturedParts(), 0u);
  ASSERT_EQ(view->bodies().warnings().size(), 1u);
  EXPECT_NE(view->bodies().warnings()[0].find("broken.png"), std::string::npos);
  const std::uint8_t* left = at(image, -0.25, 0.5);
  EXPECT_NEAR(left[0], left[2], 30);  // drawn in its (white, lit) colour
}

TEST_F(Texture, AnImageEmbeddedInTheModelFileIsDrawn) {
  std::ofstream(dir_ / "board.gltf") << kBoardGltf;
  render::SceneView* view = nullptr;
  const render::RgbImage image = picture("", &view, "board.gltf");
  ASSERT_EQ(visuals_[1].meshes.size(), 1u);
  const render::TextureImage& texture = visuals_[1].meshes[0].texture;
  ASSERT_TRUE(texture.encoded);
  EXPECT_EQ(texture.format, "png");
  EXPECT_EQ(view->bodies().texturedParts(), 1u);
  EXPECT_TRUE(view->bodies().warnings().empty());
  for (const double z : {0.2, 0.5, 0.8}) {
    const std::uint8_t* left = at(image, -0.3, z);
    const std::uint8_t* right = at(image, 0.3, z);
    SCOPED_TRACE(z);
    EXPECT_GT(left[0], 3 * left[2]);
    EXPECT_GT(right[2], 3 * right[0]);
  }
}

}  // namespace
}  // namespace sim
