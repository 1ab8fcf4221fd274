// Pins the committed assets in assets/ (written by tools/assetgen): every MF-4 link is there with
// plausible dimensions and its frame at its joint, the container can be gripped, the site has its
// ramp and platforms, and the committed files are what the generator writes today.
#include <engine/mesh_import.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <string>

namespace sim::engine {
namespace {

namespace fs = std::filesystem;

const fs::path kAssets = fs::path(SIMTRAINER_SOURCE_DIR) / "assets";
const fs::path kFresh = fs::path(SIMTRAINER_TEST_MODELS_DIR) / "assets";

// Float32 storage of coordinates up to 10 m (the site): 1e-6 relative, so 10 µm absolute.
constexpr double kTolerance = 1e-5;

const char* const kLinks[] = {"chassis", "track_left",  "track_right", "turret",   "shoulder",
                              "elbow",   "wrist_pitch", "wrist_roll",  "jaw_left", "jaw_right"};

// One node of a committed glTF asset (y-up by the glTF specification).
ImportedModel node(const std::string& file, const std::string& name) {
  MeshImportOptions options;
  options.up = UpAxis::Y;
  options.node = name;
  return importMesh((kAssets / file).string(), options);
}

// A link's bounding box in the model frame (its frames have no rotation in the rest pose).
Aabb modelBounds(const ImportedModel& link) {
  Aabb local = link.bounds();
  Aabb out;
  for (int i = 0; i < 3; ++i) {
    out.min[i] = local.min[i] + link.frame.position[i];
    out.max[i] = local.max[i] + link.frame.position[i];
  }
  return out;
}

bool inside(double x, double lo, double hi) {
  return x >= lo - kTolerance && x <= hi + kTolerance;
}

class Mf4Asset : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* name : kLinks) links_[name] = node("mf4/mf4.glb", name);
  }
  static const ImportedModel& link(const std::string& name) { return links_.at(name); }
  static Aabb box(const std::string& name) { return modelBounds(link(name)); }
  static Vec3d origin(const std::string& name) { return link(name).frame.position; }

 private:
  static inline std::map<std::string, ImportedModel> links_;
};

TEST_F(Mf4Asset, EveryLinkIsANodeWithItsOwnMesh) {
  MeshImportOptions options;
  options.up = UpAxis::Y;
  const auto names = meshNodeNames((kAssets / "mf4/mf4.glb").string(), options);
  for (const char* name : kLinks) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    ASSERT_EQ(link(name).meshes.size(), 1u) << name;
    EXPECT_EQ(link(name).meshes[0].node, name);
    // Rest pose: every link frame has the model's axes.
    const auto& q = link(name).frame.rotation;
    EXPECT_NEAR(std::abs(q[0]), 1.0, 1e-6) << name;
  }
}

TEST_F(Mf4Asset, ProportionsOfAnEodRobot) {
  // Chassis (hull between the tracks) and tracks: about 1.2 m × 0.7 m × 0.35 m in all.
  const Vec3d hull = box("chassis").size();
  EXPECT_TRUE(inside(hull[0], 1.0, 1.4)) << hull[0];
  EXPECT_TRUE(inside(hull[1], 0.3, 0.5)) << hull[1];
  for (const char* track : {"track_left", "track_right"}) {
    const Aabb t = box(track);
    EXPECT_TRUE(inside(t.size()[0], 1.0, 1.4)) << track;
    EXPECT_TRUE(inside(t.size()[1], 0.1, 0.2)) << track;
    EXPECT_NEAR(t.min[2], 0.0, kTolerance) << track << " stands on the ground";
  }
  const double width = box("track_left").max[1] - box("track_right").min[1];
  EXPECT_TRUE(inside(width, 0.6, 0.75)) << width;
  EXPECT_TRUE(inside(box("chassis").max[2], 0.3, 0.4));
  // Tracks clear of the hull on both sides.
  EXPECT_GE(box("track_left").min[1], box("chassis").max[1] - kTolerance);
  EXPECT_LE(box("track_right").max[1], box("chassis").min[1] + kTolerance);
  // Reach from the shoulder axis to the jaw tips: 1.5–2 m.
  const double reach = box("jaw_left").max[0] - origin("shoulder")[0];
  EXPECT_TRUE(inside(reach, 1.5, 2.0)) << reach;
}

TEST_F(Mf4Asset, LinkFramesSitAtTheirJoints) {
  // Turret bearing on the hull's top, above the hull.
  const Aabb hull = box("chassis");
  EXPECT_NEAR(origin("turret")[2], hull.max[2], kTolerance);
  EXPECT_TRUE(inside(origin("turret")[0], hull.min[0], hull.max[0]));
  // Shoulder axis at the top of the turret, within its footprint.
  const Aabb turret = box("turret");
  EXPECT_TRUE(inside(origin("shoulder")[2], turret.max[2] - 0.1, turret.max[2]));
  EXPECT_TRUE(inside(origin("shoulder")[0], turret.min[0], turret.max[0]));
  EXPECT_NEAR(origin("shoulder")[1], 0.0, kTolerance);
  // Each arm joint at the far end of the link before it, on the arm's centre line.
  const char* const chain[][2] = {{"shoulder", "elbow"},
                                  {"elbow", "wrist_pitch"},
                                  {"wrist_pitch", "wrist_roll"},
                                  {"wrist_roll", "jaw_left"},
                                  {"wrist_roll", "jaw_right"}};
  for (const auto& [parent, child] : chain) {
    const Aabb p = box(parent);
    const Vec3d o = origin(child);
    EXPECT_TRUE(inside(o[0], p.max[0] - 0.07, p.max[0])) << child << " x " << o[0];
    EXPECT_TRUE(inside(o[1], p.min[1], p.max[1])) << child;
    EXPECT_NEAR(o[2], origin("shoulder")[2], kTolerance) << child;
    EXPECT_GT(o[0], origin(parent)[0] + 0.05) << child;
  }
  // Jaw pivots mirror each other.
  EXPECT_NEAR(origin("jaw_left")[1], -origin("jaw_right")[1], kTolerance);
  EXPECT_GT(origin("jaw_left")[1], 0.0);
}

TEST_F(Mf4Asset, Colours) {
  const auto colour = [](const std::string& name) { return link(name).meshes[0].material.diffuse; };
  for (const char* jaw : {"jaw_left", "jaw_right"}) {  // orange
    EXPECT_GT(colour(jaw)[0], 0.8);
    EXPECT_LT(colour(jaw)[2], 0.2);
  }
  for (const char* track : {"track_left", "track_right"}) {  // black
    EXPECT_LT(colour(track)[0] + colour(track)[1] + colour(track)[2], 0.3);
  }
  const auto olive = colour("chassis");  // green over red over blue
  EXPECT_GT(olive[1], olive[0]);
  EXPECT_GT(olive[0], olive[2]);
}

TEST(ContainerAsset, BoxWithAGrippableHandle) {
  const auto model = node("site/container.glb", "container");
  ASSERT_EQ(model.meshes.size(), 2u);
  const Aabb all = model.bounds();
  EXPECT_NEAR(all.size()[0], 0.40, kTolerance);
  EXPECT_NEAR(all.size()[1], 0.30, kTolerance);
  EXPECT_NEAR(all.min[2], 0.0, kTolerance);  // frame at the bottom centre
  // The handle sits on the lid and is thinner than the 0.08 m between the parallel jaws.
  for (const auto& mesh : model.meshes) {
    if (mesh.name != "container_handle") continue;
    ImportedModel handle;
    handle.meshes = {mesh};
    const Aabb h = handle.bounds();
    EXPECT_NEAR(h.min[2], 0.30, kTolerance);
    EXPECT_LT(h.size()[1], 0.08);
    EXPECT_GT(h.size()[0], 0.15);
    return;
  }
  FAIL() << "no mesh named container_handle";
}

TEST(SiteAsset, FloorRampAndPlatforms) {
  const Aabb floor = modelBounds(node("site/site.glb", "floor"));
  EXPECT_NEAR(floor.size()[0], 20.0, kTolerance);
  EXPECT_NEAR(floor.size()[1], 20.0, kTolerance);
  EXPECT_NEAR(floor.max[2], 0.0, kTolerance);
  // The ramp's incline from its extent: atan(rise / run) = 15°.
  const Aabb ramp = node("site/site.glb", "ramp").bounds();
  const double angle = std::atan2(ramp.size()[2], ramp.size()[0]) * 180.0 / std::numbers::pi;
  EXPECT_NEAR(angle, 15.0, 0.01);
  // Platform at the ramp's top, and the shelf: both 0.8 m high, standing on the floor.
  const Aabb rampInModel = modelBounds(node("site/site.glb", "ramp"));
  const Aabb platform = modelBounds(node("site/site.glb", "platform"));
  EXPECT_NEAR(platform.max[2], ramp.max[2], kTolerance);
  EXPECT_NEAR(platform.min[0], rampInModel.max[0], kTolerance);
  const Aabb shelf = modelBounds(node("site/site.glb", "shelf"));
  for (const Aabb& b : {platform, shelf}) {
    EXPECT_NEAR(b.max[2], 0.8, kTolerance);
    EXPECT_NEAR(b.min[2], 0.0, kTolerance);
  }
}

std::string readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Every file under `root` but README.md, as paths relative to it.
std::set<std::string> generatedFiles(const fs::path& root) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") {
      files.insert(fs::relative(entry.path(), root).generic_string());
    }
  }
  return files;
}

TEST(CommittedAssets, AreWhatTheGeneratorWrites) {
  // The generator writes exactly the committed files, byte for byte.
  const std::set<std::string> committed_files = generatedFiles(kAssets);
  EXPECT_EQ(committed_files, generatedFiles(kFresh))
      << "assets/ and tools/assetgen's output hold different files: run `cmake --build build "
      << "--target assets` and commit the result";
  for (const char* file : {"mf4/mf4.glb", "site/container.glb", "site/site.glb",
                           "robots/sim_arm6_description/urdf/sim_arm6.urdf",
                           "robots/sim_gripper_description/urdf/sim_gripper.urdf"}) {
    EXPECT_EQ(committed_files.count(file), 1u) << file;
  }
  for (const std::string& file : committed_files) {
    const std::string committed = readBytes(kAssets / file);
    ASSERT_FALSE(committed.empty()) << file;
    EXPECT_LT(committed.size(), 1u << 20) << file << ": keep committed assets under 1 MB";
    EXPECT_TRUE(committed == readBytes(kFresh / file))
        << file << " differs from tools/assetgen's output: run `cmake --build build --target "
        << "assets` and commit the result";
  }
}

}  // namespace
}  // namespace sim::engine
