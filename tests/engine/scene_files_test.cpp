// Scene features that reach beyond one YAML file: visual models and collision shapes read from
// model files, mass properties computed from shapes, reference frames off the centre of mass,
// included files placed at a pose, and cameras. Errors must name the right file, line and key.
#include <dynamics/shapes.h>
#include <engine/mesh_import.h>
#include <engine/scene.h>

#include "scene_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>

namespace sim::engine {
namespace {

namespace fs = std::filesystem;
using dynamics::Vec3;
using testing::unitBoxLine;
using testing::unitBoxScene;

const fs::path kSource = SIMTRAINER_SOURCE_DIR;
const std::string kMf4 = (kSource / "assets/mf4/mf4.glb").string();
const std::string kContainer = (kSource / "assets/site/container.glb").string();
const std::string kSite = (kSource / "assets/site/site.glb").string();

// A fresh directory for scene files that include each other.
class SceneFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("simtrainer_scene_files_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  // Loads `path` expecting a SceneError; returns what().
  static std::string errorOf(const std::string& path, const std::vector<Override>& overrides = {}) {
    try {
      loadScene(path, overrides);
    } catch (const SceneError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no SceneError for " << path;
    return {};
  }

  fs::path dir_;
};

TEST_F(SceneFiles, VisualIsImportedAndPlacedInTheReferenceFrame) {
  const std::string path = write("s.yaml", R"(
bodies:
  - name: shoulder
    mass: 10
    inertia: [0.1, 0.5, 0.5]
    center_of_mass: [0.3, 0, 0]
    position: [0.2, 0, 0.55]
    visual: {file: )" + kMf4 + R"(, node: shoulder, up: y}
)");
  const Scene scene = loadScene(path);
  ASSERT_EQ(scene.looks.size(), 1u);
  ASSERT_EQ(scene.looks[0].visuals.size(), 1u);
  const VisualDef& visual = scene.looks[0].visuals[0];
  // The same meshes as a direct import of that node.
  MeshImportOptions options;
  options.node = "shoulder";
  options.up = UpAxis::Y;
  const ImportedModel direct = importMesh(kMf4, options);
  ASSERT_TRUE(visual.model);
  EXPECT_EQ(visual.model->vertexCount(), direct.vertexCount());
  EXPECT_GT(direct.vertexCount(), 8u);
  EXPECT_EQ(visual.node, "shoulder");
  // The body frame is at the centre of mass, 0.3 m along x from the reference (link) frame; the
  // node's frame is the reference frame, so it sits at -0.3 m in the body frame.
  const dynamics::BodyDef& body = scene.model.bodies[0];
  EXPECT_NEAR((body.position_m - Vec3(0.5, 0, 0.55)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((visual.pose.position - Vec3(-0.3, 0, 0)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((scene.looks[0].reference.position - Vec3(-0.3, 0, 0)).norm(), 0.0, 1e-12);
}

// A scene loaded again while the first is alive (an instructor's parameter change) shares the
// first one's imported meshes instead of importing and holding a second copy; a model file
// changed on disk since is imported again.
TEST_F(SceneFiles, ReloadSharesImportedModelsUntilTheFileChanges) {
  const std::string triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  const std::string model = write("part.obj", triangle);
  const std::string path = write("s.yaml", unitBoxScene("    visual: {file: part.obj}\n"));
  const Scene first = loadScene(path);
  const Scene again = loadScene(path);
  ASSERT_TRUE(first.looks.at(0).visuals.at(0).model);
  EXPECT_EQ(first.looks[0].visuals[0].model.get(), again.looks.at(0).visuals.at(0).model.get());
  EXPECT_EQ(first.looks[0].visuals[0].model->vertexCount(), 3u);

  write("part.obj", triangle + "v 0 0 1\nf 1 2 4\n");
  const Scene changed = loadScene(path);
  EXPECT_NE(changed.looks.at(0).visuals.at(0).model.get(), first.looks[0].visuals[0].model.get());
  EXPECT_GT(changed.looks[0].visuals[0].model->vertexCount(), 3u) << model;
}

TEST_F(SceneFiles, VisualErrorsNameTheKey) {
  const std::string missing = write("missing.yaml", unitBoxScene(R"(    visual: {file: nowhere.glb}
)"));
  const std::string text = errorOf(missing);
  EXPECT_NE(text.find("missing.yaml:5: bodies[b].visual.file: "), std::string::npos) << text;
  EXPECT_NE(text.find("nowhere.glb"), std::string::npos) << text;

  const std::string node = write("node.yaml", unitBoxScene(R"(    visual:
      - file: )" + kMf4 + R"(
        node: elbw
)"));
  const std::string node_text = errorOf(node);
  EXPECT_NE(node_text.find("node.yaml:7: bodies[b].visual[0].node: "), std::string::npos)
      << node_text;
  EXPECT_NE(node_text.find("elbow"), std::string::npos) << "lists the known nodes: " << node_text;

  const std::string format = write("format.yaml", unitBoxScene(R"(    visual: {file: model.ply}
)"));
  const std::string format_text = errorOf(format);
  EXPECT_NE(format_text.find("format.yaml:5: bodies[b].visual.file: "), std::string::npos)
      << format_text;
  EXPECT_NE(format_text.find("unsupported model format"), std::string::npos) << format_text;

  // A corrupt file: the importer's complaint reaches the user with the place.
  write("broken.glb", "glTF this is not");
  const std::string broken =
      write("broken.yaml", unitBoxScene(R"(    visual: {file: broken.glb, up: x}
)"));
  EXPECT_NE(errorOf(broken).find("broken.yaml:5: bodies[b].visual.up: expected z or y"),
            std::string::npos)
      << errorOf(broken);
  const std::string broken2 = write("broken2.yaml", unitBoxScene(R"(    visual: {file: broken.glb}
)"));
  const std::string broken_text = errorOf(broken2);
  EXPECT_NE(broken_text.find("broken2.yaml:5: bodies[b].visual.file: "), std::string::npos)
      << broken_text;
}

// Density: mass, centre and inertia from the shapes. Two unit cubes of 1000 kg/m³ side by side
// along x (centres at x = 0 and x = 2): 2000 kg, centre at x = 1, Iyy = 2 (m/6 + m·1²).
TEST_F(SceneFiles, DensityGivesMassCentreAndInertia) {
  const std::string path = write("d.yaml", R"(
bodies:
  - name: dumbbell
    density: 1000
    position: [5, 0, 1]
    rpy: [0, 0, 1.5707963267948966]
    shapes:
      - {type: box, size: [1, 1, 1]}
      - {type: box, size: [1, 1, 1], position: [2, 0, 0]}
)");
  const Scene scene = loadScene(path);
  const dynamics::BodyDef& body = scene.model.bodies[0];
  EXPECT_NEAR(body.mass_kg, 2000.0, 1e-9);
  const double cube = 1000.0 / 6.0;
  EXPECT_NEAR(body.inertia_kgm2(0, 0), 2.0 * cube, 1e-9);
  EXPECT_NEAR(body.inertia_kgm2(1, 1), 2.0 * cube + 2.0 * 1000.0, 1e-9);
  EXPECT_NEAR(body.inertia_kgm2(2, 2), 2.0 * cube + 2.0 * 1000.0, 1e-9);
  // The reference frame is turned 90° about z: its x axis is the world's y.
  EXPECT_NEAR((body.position_m - Vec3(5, 1, 1)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((body.shapes[0].pose.position - Vec3(-1, 0, 0)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((body.shapes[1].pose.position - Vec3(1, 0, 0)).norm(), 0.0, 1e-12);

  // The same shapes with `mass` only: the same distribution scaled to the mass.
  const std::string by_mass = write("m.yaml", R"(
bodies:
  - name: dumbbell
    mass: 2
    shapes:
      - {type: box, size: [1, 1, 1]}
      - {type: box, size: [1, 1, 1], position: [2, 0, 0]}
)");
  const Scene scaled = loadScene(by_mass);
  EXPECT_NEAR(scaled.model.bodies[0].mass_kg, 2.0, 1e-12);
  EXPECT_NEAR(scaled.model.bodies[0].inertia_kgm2(1, 1), 2.0 / 6.0 + 2.0, 1e-12);
  EXPECT_NEAR((scaled.model.bodies[0].position_m - Vec3(1, 0, 0)).norm(), 0.0, 1e-12);

  // Density with a stated mass is contradictory; density without volume is useless.
  const std::string both = write("both.yaml", R"(bodies:
  - name: b
    density: 1000
    mass: 3
    shapes: [{type: sphere, radius: 1}]
)");
  EXPECT_EQ(errorOf(both), both +
                               ":4: bodies[b].mass: give either density (mass, centre and "
                               "inertia from the shapes) or mass");
  const std::string none = write("none.yaml", R"(bodies:
  - name: b
    mass: 3
)");
  EXPECT_EQ(errorOf(none), none +
                               ":2: bodies[b].inertia: missing (required: inertia, box, "
                               "density, or shapes with a volume to compute it from)");
}

// A hull from a model file: the container's body node, 0.4 × 0.3 × 0.3 m. With a density the
// mass and inertia follow from the file's geometry: those of a solid box.
TEST_F(SceneFiles, HullFromModelFileHasTheBoxMassProperties) {
  const std::string path = write("c.yaml", R"(
bodies:
  - name: container
    density: 250
    shapes:
      - {type: hull, file: )" + kContainer + R"(, node: container_body, up: y}
)");
  const Scene scene = loadScene(path);
  const dynamics::BodyDef& body = scene.model.bodies[0];
  // glTF stores vertices as 32-bit floats (relative rounding 6e-8 per coordinate), so the
  // volume and moments carry relative errors of a few 1e-7: tolerance 1e-6.
  const double m = 250.0 * 0.4 * 0.3 * 0.3;
  EXPECT_NEAR(body.mass_kg, m, 1e-6 * m);
  EXPECT_NEAR(body.inertia_kgm2(0, 0), m * (0.09 + 0.09) / 12.0, 1e-6 * 0.135);
  EXPECT_NEAR(body.inertia_kgm2(1, 1), m * (0.16 + 0.09) / 12.0, 1e-6 * 0.1875);
  EXPECT_NEAR(body.inertia_kgm2(2, 2), m * (0.16 + 0.09) / 12.0, 1e-6 * 0.1875);
  MeshImportOptions options;
  options.node = "container_body";
  options.up = UpAxis::Y;
  const Aabb bounds = importMesh(kContainer, options).bounds();
  const Vec3 centre((bounds.min[0] + bounds.max[0]) / 2, (bounds.min[1] + bounds.max[1]) / 2,
                    (bounds.min[2] + bounds.max[2]) / 2);
  EXPECT_NEAR((body.position_m - centre).norm(), 0.0, 1e-6);
  ASSERT_EQ(scene.files.size(), 2u);  // the scene and the model file shaping a collision hull
  EXPECT_NE(scene.files[1].find("container.glb"), std::string::npos);

  // A static triangle mesh from the site model.
  const std::string site = write("site.yaml", R"(
bodies:
  - name: site
    static: true
    shapes:
      - {type: mesh, file: )" + kSite + R"(, up: y}
)");
  const Scene loaded = loadScene(site);
  ASSERT_TRUE(loaded.model.bodies[0].shapes[0].mesh);
  EXPECT_GT(loaded.model.bodies[0].shapes[0].mesh->triangles.size(), 12u);

  // Hull keys on a box are errors; inline points and a file together too.
  const std::string mixed = write("mixed.yaml", unitBoxScene(R"(    shapes:
      - {type: hull, file: )" + kContainer + R"(, points: [[0, 0, 0]]}
)"));
  EXPECT_NE(errorOf(mixed).find(":6: bodies[b].shapes[0].points: give either file or the inline "
                                "points, not both"),
            std::string::npos)
      << errorOf(mixed);
}

const char* kRobot = R"(# a two-link arm on a base, in its own coordinates
materials:
  - {name: rubber, friction: 0.9}
bodies:
  - name: base
    mass: 10
    box: [0.4, 0.4, 0.2]
    position: [0, 0, 0.1]
  - name: link
    mass: 2
    inertia: [0.01, 0.1, 0.1]
    center_of_mass: [0.25, 0, 0]
    position: [0, 0, 0.3]
joints:
  - {name: mount, type: fixed, parent: world, child: base}
  - {name: shoulder, type: hinge, parent: base, child: link, axis: [0, 1, 0]}
motors:
  - {name: drive, joint: shoulder, Mp: 5, w_xx: 10, t_m: 0.1, r: 50}
cameras:
  - {name: tool, type: onboard, body: link, position: [0.5, 0, 0]}
  - {name: side, type: fixed, position: [0, -3, 1], target: [0, 0, 0.3]}
)";

TEST_F(SceneFiles, IncludedFileIsPlacedAtItsPose) {
  write("robots/arm.yaml", kRobot);
  const std::string path = write("cell.yaml", R"(
include:
  - file: robots/arm.yaml
    position: [2, 1, 0]
    rpy: [0, 0, 1.5707963267948966]
bodies:
  - {name: table, static: true, shapes: [{type: plane}]}
cameras:
  - {name: overview, type: orbit, position: [5, 5, 5], target: [2, 1, 0], default: true}
)");
  const Scene scene = loadScene(path);
  const auto& model = scene.model;
  const int base = model.findBody("base"), link = model.findBody("link");
  ASSERT_GE(base, 0);
  ASSERT_GE(link, 0);
  // Turned 90° about z: the file's +x is the scene's +y.
  EXPECT_NEAR((model.bodies[base].position_m - Vec3(2, 1, 0.1)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((model.bodies[link].position_m - Vec3(2, 1.25, 0.3)).norm(), 0.0, 1e-12);
  // The hinge axis (file +y) is the scene's -x; the anchor is the link's reference point.
  const dynamics::JointDef& shoulder =
      model.joints[static_cast<std::size_t>(model.findJoint("shoulder"))];
  const dynamics::BodyDef& base_body = model.bodies[base];
  const Vec3 anchor = base_body.position_m + base_body.orientation * shoulder.frame_a.position;
  const Vec3 axis = base_body.orientation * (shoulder.frame_a.rotation * Vec3::UnitX());
  EXPECT_NEAR((anchor - Vec3(2, 1, 0.3)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((axis - Vec3(-1, 0, 0)).norm(), 0.0, 1e-12);
  EXPECT_EQ(model.motors.at(0).name, "drive");
  EXPECT_EQ(model.materials.back().name, "rubber");
  // Cameras: the include's fixed camera is placed, the onboard one stays in body axes.
  ASSERT_EQ(scene.cameras.size(), 3u);
  EXPECT_EQ(scene.cameras[0].kind, CameraDef::Kind::Onboard);
  EXPECT_EQ(scene.cameras[0].body, link);
  EXPECT_NEAR((scene.cameras[0].position_m - Vec3(0.5, 0, 0)).norm(), 0.0, 1e-12);
  EXPECT_NEAR((scene.cameras[1].position_m - Vec3(5, 1, 1)).norm(), 0.0, 1e-12);
  EXPECT_EQ(scene.default_camera, 2);
  // The scene's identity covers the included file: editing it changes the hash.
  EXPECT_EQ(scene.files.size(), 2u);
  write("robots/arm.yaml", std::string(kRobot) + "# edited\n");
  EXPECT_NE(loadScene(path).source_hash, scene.source_hash);
  // An override reaches a parameter of the included file.
  const Scene changed = loadScene(path, {parseOverride("motors.drive.Mp=7")});
  EXPECT_EQ(changed.model.motors[0].stall_torque_Nm, 7.0);
}

TEST_F(SceneFiles, IncludeErrorsNameTheFileAndLine) {
  // An error inside the included file names that file and its line.
  write("bad/arm.yaml", "bodies:\n  - name: base\n    mass: heavy\n    box: [1, 1, 1]\n");
  const std::string uses_bad = write("uses_bad.yaml", "include:\n  - file: bad/arm.yaml\n");
  EXPECT_EQ(errorOf(uses_bad), (dir_ / "bad/arm.yaml").string() +
                                   ":3: bodies[base].mass: expected a number, got \"heavy\"");

  // A missing file is an error at the include.
  const std::string missing = write("missing.yaml", "\ninclude:\n  - file: nowhere.yaml\n");
  EXPECT_EQ(errorOf(missing), missing + ":3: include[0].file: cannot open " +
                                  (dir_ / "nowhere.yaml").string() + ": no such file");
  // Not a file a person wrote: a directory, a device.
  const std::string device = write("device.yaml", "include:\n  - file: /dev/zero\n");
  EXPECT_EQ(errorOf(device),
            device + ":2: include[0].file: cannot open /dev/zero: not a regular file");

  // A cycle names its files.
  write("a.yaml", "include:\n  - file: b.yaml\n");
  write("b.yaml", "include:\n  - file: a.yaml\n");
  const std::string cycle = errorOf((dir_ / "a.yaml").string());
  EXPECT_NE(cycle.find("b.yaml:2: include[0].file: include cycle: "), std::string::npos) << cycle;

  // Sections that belong to the top scene.
  write("solver.yaml", "bodies: []\nsolver: {substeps: 2}\n");
  const std::string uses_solver = write("uses_solver.yaml", "include: [{file: solver.yaml}]\n");
  const std::string solver_text = errorOf(uses_solver);
  EXPECT_NE(solver_text.find("solver.yaml:2: solver: unknown key (expected one of: name, "
                             "description, include, materials, bodies, joints, motors, "
                             "repeaters, cameras)"),
            std::string::npos)
      << solver_text;

  // A name defined in two files.
  write("robots/arm.yaml", kRobot);
  const std::string twice = write("twice.yaml", R"(include: [{file: robots/arm.yaml}]
bodies:
  - name: link
    mass: 1
    box: [1, 1, 1]
)");
  EXPECT_EQ(errorOf(twice), twice +
                                ":3: bodies[link].name: duplicate name \"link\": a body of "
                                "that name is defined at " +
                                (dir_ / "robots/arm.yaml").string() + ":9");

  // dynamics::validate() problems in an included file are located there too.
  write("neg/arm.yaml", "bodies:\n  - name: base\n    mass: -1\n    box: [1, 1, 1]\n");
  const std::string uses_neg = write("uses_neg.yaml", "include: [{file: neg/arm.yaml}]\n");
  try {
    loadScene(uses_neg);
    ADD_FAILURE() << "negative mass accepted";
  } catch (const SceneInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_EQ(e.errors()[0].file(), (dir_ / "neg/arm.yaml").string());
    EXPECT_EQ(e.errors()[0].line(), 3);
  }
}

// The rest of the bad-input list: an inertia that is not positive definite is located at its
// key; an empty model file at the key that names it (shapes as well as visuals).
TEST_F(SceneFiles, BadInertiaAndEmptyModelFileAreLocated) {
  const std::string inertia = write("inertia.yaml", R"(bodies:
  - name: b
    mass: 1
    inertia: [[1, 0, 0], [0, -2, 0], [0, 0, 3]]
)");
  try {
    loadScene(inertia);
    ADD_FAILURE() << "a negative principal moment accepted";
  } catch (const SceneInvalid& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors()[0].file(), inertia);
    EXPECT_EQ(e.errors()[0].line(), 4);
    EXPECT_EQ(e.errors()[0].key(), "bodies[b].inertia");
    EXPECT_NE(e.errors()[0].message().find("positive definite"), std::string::npos);
  }
  write("empty.glb", "");
  const std::string visual = write("visual.yaml", unitBoxScene(R"(    visual: {file: empty.glb}
)"));
  EXPECT_EQ(errorOf(visual), visual + ":5: bodies[b].visual.file: " +
                                 (dir_ / "empty.glb").string() + ": file is empty");
  const std::string hull = write("hull.yaml", unitBoxScene(R"(    shapes:
      - type: hull
        file: empty.glb
)"));
  EXPECT_EQ(errorOf(hull), hull + ":7: bodies[b].shapes[0].file: " + (dir_ / "empty.glb").string() +
                               ": file is empty");
}

TEST_F(SceneFiles, CamerasAndTheirErrors) {
  const std::string path = write("cams.yaml", "\n" + unitBoxLine(R"(cameras:
  - {name: chase, type: follow, body: cart}
  - {name: eye, type: onboard, body: cart, direction: [0, 0, -2], fov: 90}
  - {name: post, type: fixed, position: [1, 2, 3], target: [0, 0, 0], inset: [0.7, 0, 0.3, 0.25]}
)"));
  const Scene scene = loadScene(path);
  ASSERT_EQ(scene.cameras.size(), 3u);
  EXPECT_FALSE(scene.cameras[0].inset.has_value());
  ASSERT_TRUE(scene.cameras[2].inset.has_value());
  EXPECT_EQ(*scene.cameras[2].inset, (std::array<double, 4>{0.7, 0.0, 0.3, 0.25}));
  EXPECT_EQ(scene.default_camera, 0);  // the first, when none says default
  EXPECT_EQ(scene.cameras[0].kind, CameraDef::Kind::Follow);
  EXPECT_NEAR((scene.cameras[1].direction - Vec3(0, 0, -1)).norm(), 0.0, 1e-15);
  EXPECT_EQ(scene.cameras[1].fov_deg, 90.0);

  const auto cameraError = [&](const std::string& item) {
    return errorOf(write("bad.yaml", unitBoxLine("cameras:\n  - " + item + "\n")));
  };
  const std::string bad = (dir_ / "bad.yaml").string();
  EXPECT_EQ(cameraError("{name: c, type: follow}"),
            bad + ":4: cameras[c].body: missing (required for a follow camera)");
  EXPECT_EQ(cameraError("{name: c, type: onboard, body: truck}"),
            bad + ":4: cameras[c].body: no body named \"truck\" (known: cart)");
  EXPECT_EQ(cameraError("{name: c, type: drone}"),
            bad + ":4: cameras[c].type: expected orbit, follow, fixed or onboard, got \"drone\"");
  EXPECT_EQ(cameraError("{name: c, type: fixed, position: [0, 0, 1], target: [0, 0, 1]}"),
            bad + ":4: cameras[c].target: the camera's position and target coincide");
  EXPECT_EQ(cameraError("{name: c, type: fixed, fov: 180}"),
            bad + ":4: cameras[c].fov: expected a field of view in (0, 180) degrees, got 180");
  EXPECT_EQ(cameraError("{name: c, type: orbit, inset: [0.8, 0, 0.3, 0.2]}"),
            bad +
                ":4: cameras[c].inset: expected a place inside the window: x, y >= 0, width, "
                "height > 0, x + width <= 1 and y + height <= 1, got [0.8, 0, 0.3, 0.2]");
  EXPECT_EQ(cameraError("{name: c, type: orbit, inset: [0.8, 0]}"),
            bad +
                ":4: cameras[c].inset: expected a list of 4 numbers [x, y, width, height] "
                "(fractions of the window), got a list of 2");
  const std::string two = write("two.yaml", R"(cameras:
  - {name: a, type: orbit, default: true}
  - {name: b, type: orbit, default: true}
)");
  EXPECT_EQ(errorOf(two), two +
                              ":3: cameras[b].default: only one camera can be the default "
                              "(another is at " +
                              two + ":2)");
}

// The solver's implementation switches are gone (one path per idea): a scene or an override
// that still sets one is refused with the file, the line, the key and what became of it.
TEST_F(SceneFiles, RemovedSolverKeysAreRefusedByName) {
  for (const char* key : {"batched_contacts", "low_rank_responses", "reduced_mechanisms"}) {
    const std::string scene = write("old.yaml", std::string("solver:\n  time_step: 0.01\n  ") +
                                                    key + ": true\n" + unitBoxLine("", "b"));
    const std::string text = errorOf(scene);
    EXPECT_EQ(text.rfind(scene + ":3: solver." + key + ": this key is gone: ", 0), 0u) << text;
    EXPECT_NE(text.find("; remove it"), std::string::npos) << text;
    const std::string grasp = (kSource / "scenes/grasp.yaml").string();
    const std::string set =
        errorOf(grasp, {parseOverride(std::string("solver.") + key + "=false")});
    EXPECT_NE(set.find("solver." + std::string(key) + ": this key is gone: "), std::string::npos)
        << set;
  }
}

// --set takes true/false for switches, so a solver option can be compared without editing files;
// anything else that is not a number is refused naming the key, and a switch value on a numeric
// key is refused by that key's own check.
TEST(Overrides, SwitchesTakeTrueAndFalse) {
  const std::string grasp = (kSource / "scenes/grasp.yaml").string();
  EXPECT_TRUE(loadScene(grasp).model.solver.articulated_contacts);
  EXPECT_FALSE(loadScene(grasp, {parseOverride("solver.articulated_contacts=false")})
                   .model.solver.articulated_contacts);
  try {
    parseOverride("solver.articulated_contacts=yes");
    ADD_FAILURE() << "\"yes\" was taken";
  } catch (const SceneError& e) {
    EXPECT_EQ(e.key(), "solver.articulated_contacts");
    EXPECT_NE(e.message().find("true or false"), std::string::npos) << e.message();
  }
  try {
    loadScene(grasp, {parseOverride("solver.substeps=true")});
    ADD_FAILURE() << "a switch value on a numeric key was taken";
  } catch (const SceneError& e) {
    EXPECT_NE(e.message().find("is a number, got \"true\""), std::string::npos) << e.message();
    EXPECT_NE(std::string(e.what()).find("substeps"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sim::engine
