// Pins engine/src/scene_frames.cpp and its use by the scene loader: poses given relative to a
// body (`frame:` on bodies and joints) equal their world twins, the MF-4 and grasp scenes in the
// relative form build the very models of their world-coordinates originals, errors name the
// file, line and key, and a joint anchor far from both of its bodies is a warning.
#include <dynamics/model.h>
#include <engine/scene.h>

#include "../../engine/src/scene_frames.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace sim::engine {
namespace {

using dynamics::Quat;
using dynamics::Vec3;

const std::string kSourceDir = SIMTRAINER_SOURCE_DIR;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every pose the dynamics gets from the file: bodies' centre-of-mass poses and joints' frames on
// both bodies, equal to within `tolerance` (0: bit for bit).
void expectSamePoses(const Scene& a, const Scene& b, double tolerance) {
  ASSERT_EQ(a.model.bodies.size(), b.model.bodies.size());
  ASSERT_EQ(a.model.joints.size(), b.model.joints.size());
  auto near = [tolerance](const auto& x, const auto& y) {
    return tolerance == 0.0 ? x == y : (x - y).cwiseAbs().maxCoeff() <= tolerance;
  };
  for (std::size_t i = 0; i < a.model.bodies.size(); ++i) {
    const auto &p = a.model.bodies[i], &q = b.model.bodies[i];
    SCOPED_TRACE("body " + p.name);
    EXPECT_EQ(p.name, q.name);
    EXPECT_TRUE(near(p.position_m, q.position_m))
        << p.position_m.transpose() << " vs " << q.position_m.transpose();
    EXPECT_TRUE(near(p.orientation.coeffs(), q.orientation.coeffs()));
    EXPECT_EQ(p.linear_velocity_mps, q.linear_velocity_mps);
  }
  for (std::size_t i = 0; i < a.model.joints.size(); ++i) {
    const auto &p = a.model.joints[i], &q = b.model.joints[i];
    SCOPED_TRACE("joint " + p.name);
    EXPECT_TRUE(near(p.frame_a.position, q.frame_a.position))
        << p.frame_a.position.transpose() << " vs " << q.frame_a.position.transpose();
    EXPECT_TRUE(near(p.frame_b.position, q.frame_b.position))
        << p.frame_b.position.transpose() << " vs " << q.frame_b.position.transpose();
    EXPECT_TRUE(near(p.frame_a.rotation.coeffs(), q.frame_a.rotation.coeffs()));
    EXPECT_TRUE(near(p.frame_b.rotation.coeffs(), q.frame_b.rotation.coeffs()));
  }
}

// A base and a chain of three parents on it, unrotated. The shifts are chosen so that adding
// them in doubles misses the written sums by an ulp (-2.2 + 0.275 is -1.9250000000000003): the
// loader adds the decimals exactly, so the relative file gives the world file's doubles.
const std::string kChainWorld = R"(bodies:
  - {name: base, mass: 5, box: [0.4, 0.4, 0.2], position: [1.018, -2.2, 0.15]}
  - {name: a, mass: 1, box: [0.1, 0.1, 0.1], position: [0.995, -1.925, 0.05]}
  - {name: b, mass: 1, box: [0.1, 0.1, 0.1], position: [0.995, -1.875, 0.05]}
  - {name: c, mass: 1, box: [0.1, 0.1, 0.1], position: [0.995, -1.825, 0.05]}
joints:
  - {name: ja, type: hinge, parent: base, child: a, anchor: [0.995, -1.95, 0.05], axis: [0, 1, 0]}
  - {name: jb, type: hinge, parent: a, child: b, anchor: [0.995, -1.9, 0.05], axis: [0, 1, 0]}
  - {name: jc, type: hinge, parent: b, child: c, anchor: [0.995, -1.85, 0.05], axis: [0, 1, 0]}
)";
// The same, c first (frames are placed whatever the order), relative to the parents.
const std::string kChainRelative = R"(bodies:
  - {name: base, mass: 5, box: [0.4, 0.4, 0.2], position: [1.018, -2.2, 0.15]}
  - {name: a, mass: 1, box: [0.1, 0.1, 0.1], frame: parent, position: [-0.023, 0.275, -0.1]}
  - {name: b, mass: 1, box: [0.1, 0.1, 0.1], frame: parent, position: [0, 0.05, 0]}
  - {name: c, mass: 1, box: [0.1, 0.1, 0.1], frame: b, position: [0, 0.05, 0]}
joints:
  - {name: ja, type: hinge, parent: base, child: a, frame: parent, anchor: [-0.023, 0.25, -0.1], axis: [0, 1, 0]}
  - {name: jb, type: hinge, parent: a, child: b, frame: parent, anchor: [0, 0.025, 0], axis: [0, 1, 0]}
  - {name: jc, type: hinge, parent: b, child: c, frame: child, anchor: [0, -0.025, 0], axis: [0, 1, 0]}
)";

TEST(SceneFrames, ChainOfThreeParentsEqualsItsWorldTwinBitForBit) {
  const Scene world = loadSceneFromString(kChainWorld, "world.yaml");
  const Scene relative = loadSceneFromString(kChainRelative, "relative.yaml");
  expectSamePoses(relative, world, 0.0);
  // The doubles the decimals name, not their sum in doubles (which is one ulp off).
  EXPECT_EQ(relative.model.bodies[1].position_m.y(), -1.925);
  EXPECT_NE(-2.2 + 0.275, -1.925);
  EXPECT_TRUE(relative.warnings.empty()) << relative.warnings.front();
}

TEST(SceneFrames, OrderOfTheBodiesDoesNotMatter) {
  std::string reversed = kChainRelative;
  const std::string c_line =
      "  - {name: c, mass: 1, box: [0.1, 0.1, 0.1], frame: b, position: [0, 0.05, 0]}\n";
  reversed.erase(reversed.find(c_line), c_line.size());
  reversed.insert(reversed.find("  - {name: base"), c_line);
  const Scene world = loadSceneFromString(kChainWorld, "world.yaml");
  const Scene relative = loadSceneFromString(reversed, "reversed.yaml");
  ASSERT_EQ(relative.model.bodies.front().name, "c");
  EXPECT_EQ(relative.model.bodies.front().position_m, world.model.bodies.back().position_m);
}

// A parent turned 90° about z and tilted: the child's offset, its own orientation and the
// joint's anchor and axis turn with it. Rotations in doubles are not exact (cos 90° is 6e-17),
// so the world twin, written from the exact values, agrees to 1e-15 m (a few ulps of 1 m).
TEST(SceneFrames, OrientationsComposeThroughARotatedParent) {
  const std::string relative = R"(bodies:
  - {name: base, mass: 5, box: [0.4, 0.4, 0.2], position: [1, 0, 0.5], rpy: [0, 0, 1.5707963267948966]}
  - {name: arm, mass: 1, box: [0.5, 0.1, 0.1], frame: parent, position: [0.5, 0, 0], rpy: [0, 0, 1.5707963267948966]}
joints:
  - {name: j, type: hinge, parent: base, child: arm, frame: parent, anchor: [0.25, 0, 0], axis: [1, 0, 0]}
)";
  // World: base x points along +y, so the arm sits at (1, 0.5, 0.5) turned 180°; the anchor is
  // at (1, 0.25, 0.5) and the axis is +y.
  const std::string world = R"(bodies:
  - {name: base, mass: 5, box: [0.4, 0.4, 0.2], position: [1, 0, 0.5], rpy: [0, 0, 1.5707963267948966]}
  - {name: arm, mass: 1, box: [0.5, 0.1, 0.1], position: [1, 0.5, 0.5], rpy: [0, 0, 3.141592653589793]}
joints:
  - {name: j, type: hinge, parent: base, child: arm, anchor: [1, 0.25, 0.5], axis: [0, 1, 0]}
)";
  const Scene r = loadSceneFromString(relative, "relative.yaml");
  const Scene w = loadSceneFromString(world, "world.yaml");
  expectSamePoses(r, w, 1e-15);
  // Not the unrotated sum: the offset really turned.
  EXPECT_GT((r.model.bodies[1].position_m - Vec3(1.5, 0, 0.5)).norm(), 0.5);
}

// The shipped examples: the relative MF-4 and grasp files build the models of their world
// originals (kept as tests/engine/data/*_world.yaml, loaded as if they stood beside them so their
// model paths resolve) bit for bit, so every trace and pinned hash of them is unchanged.
TEST(SceneFrames, RelativeMf4AndGraspEqualTheirWorldOriginalsBitForBit) {
  for (const char* name : {"mf4", "grasp"}) {
    SCOPED_TRACE(name);
    const std::string scene_path = kSourceDir + "/scenes/" + name + ".yaml";
    const std::string text = readFile(scene_path);
    ASSERT_NE(text.find("frame: parent"), std::string::npos);
    const Scene relative = loadScene(scene_path);
    const Scene world = loadSceneFromString(
        readFile(kSourceDir + "/tests/engine/data/" + name + "_world.yaml"), scene_path);
    expectSamePoses(relative, world, 0.0);
    EXPECT_TRUE(relative.warnings.empty()) << relative.warnings.front();
  }
}

TEST(SceneFrames, ErrorsNameFileLineAndKey) {
  auto error = [](const std::string& text) -> std::string {
    try {
      (void)loadSceneFromString(text, "f.yaml");
    } catch (const SceneError& e) {
      return e.what();
    }
    return "(loaded)";
  };
  const std::string two = "bodies:\n  - {name: a, mass: 1, box: [1, 1, 1]}\n";
  EXPECT_EQ(error(two + "  - {name: b, mass: 1, box: [1, 1, 1], frame: nobody}\n"),
            "f.yaml:3: bodies[b].frame: no body named \"nobody\" to place b on (expected world, "
            "parent or a body's name)");
  EXPECT_EQ(error("bodies:\n  - {name: a, mass: 1, box: [1, 1, 1], frame: b}\n"
                  "  - {name: b, mass: 1, box: [1, 1, 1], frame: c}\n"
                  "  - {name: c, mass: 1, box: [1, 1, 1], frame: a}\n"),
            "f.yaml:4: bodies[c].frame: frame cycle: a -> b -> c -> a");
  EXPECT_EQ(error(two + "  - {name: b, mass: 1, box: [1, 1, 1], frame: b}\n"),
            "f.yaml:3: bodies[b].frame: a body cannot be placed on itself");
  EXPECT_EQ(error(two + "  - {name: b, mass: 1, box: [1, 1, 1], frame: parent}\n"),
            "f.yaml:3: bodies[b].frame: frame: parent needs a joint with child: b in this file's "
            "joints (none found); or name the body to place it on");
  EXPECT_EQ(error(two + "  - {name: b, mass: 1, box: [1, 1, 1], frame: parent}\n"
                        "  - {name: c, mass: 1, box: [1, 1, 1]}\n"
                        "joints:\n"
                        "  - {name: j1, type: ball, parent: a, child: b}\n"
                        "  - {name: j2, type: ball, parent: c, child: b}\n"),
            "f.yaml:3: bodies[b].frame: b is the child of joints j1 and j2: name the body to place "
            "it on (frame: a)");
  EXPECT_EQ(error(two + "  - {name: b, mass: 1, box: [1, 1, 1]}\n"
                        "joints:\n"
                        "  - {name: j, type: ball, parent: a, child: b, frame: a}\n"),
            "f.yaml:5: joints[j].frame: expected world, parent or child, got \"a\"");
}

// The crane user's mistake: an anchor typed in world coordinates 7 m from both of its bodies.
TEST(SceneFrames, AnchorFarFromBothBodiesIsAWarningNamingTheJoint) {
  const std::string bodies =
      "bodies:\n"
      "  - {name: boom, mass: 10, box: [2, 0.2, 0.2], position: [1, 0, 1]}\n"
      "  - {name: jib, mass: 5, box: [1, 0.2, 0.2], frame: parent, position: [2.5, 0, 0]}\n"
      "joints:\n"
      "  - {name: base, type: hinge, parent: world, child: boom, anchor: [0, 0, 9], axis: [0, 1, "
      "0]}\n";
  const Scene far = loadSceneFromString(
      bodies + "  - {name: knuckle, type: hinge, parent: boom, child: jib, anchor: [7, 0, 1]}\n",
      "crane.yaml");
  ASSERT_EQ(far.warnings.size(), 1u);
  EXPECT_EQ(far.warnings.front(),
            "crane.yaml:6: joints[knuckle].anchor: joint knuckle: the anchor (7, 0, 1) is 3 m from "
            "boom and jib, more than 0.05 m from both (in world coordinates at the start; frame: "
            "parent gives it relative to the parent)");
  // Given relative to the boom, [1, 0, 0] is the boom's tip: no warning. A joint to the world
  // (base, anchored 8 m above the boom) is never reported.
  const auto relative = [&](const std::string& anchor) {
    return loadSceneFromString(bodies +
                                   "  - {name: knuckle, type: hinge, parent: boom, child: jib, "
                                   "frame: parent, anchor: " +
                                   anchor + "}\n",
                               "crane.yaml");
  };
  const Scene near = relative("[1, 0, 0]");
  EXPECT_TRUE(near.warnings.empty()) << near.warnings.front();
  // 0.04 m beyond the boom's end face is within the tolerance.
  const Scene edge = relative("[1.04, 0, 0]");
  EXPECT_TRUE(edge.warnings.empty()) << edge.warnings.front();
}

TEST(SceneFrames, DecimalsAddExactlyAndFallBackBeyondAnInt64) {
  using detail::addDecimal;
  using detail::parseDecimal;
  using detail::toDouble;
  const auto a = parseDecimal("-2.2"), b = parseDecimal("0.275"), e = parseDecimal("1.5e-3");
  ASSERT_TRUE(a && b && e);
  EXPECT_EQ(toDouble(*addDecimal(*a, *b)), -1.925);
  EXPECT_EQ(toDouble(*e), 0.0015);
  EXPECT_EQ(toDouble(*parseDecimal("+007.50")), 7.5);
  EXPECT_FALSE(parseDecimal("0x1p3"));
  EXPECT_FALSE(parseDecimal("1.2.3"));
  EXPECT_FALSE(parseDecimal("-"));
  EXPECT_FALSE(parseDecimal("e5"));
  EXPECT_FALSE(parseDecimal("1234567890123456789"));                        // 19 digits
  EXPECT_FALSE(addDecimal(*parseDecimal("1e-30"), *parseDecimal("1e10")));  // 10^40 overflows
}

}  // namespace
}  // namespace sim::engine
