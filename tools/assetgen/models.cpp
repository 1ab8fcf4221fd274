#include "models.h"

#include <numbers>

namespace sim::assetgen {
namespace {

constexpr Colour kOlive{0.25, 0.30, 0.14, 1.0};
constexpr Colour kDarkGreen{0.13, 0.20, 0.10, 1.0};
constexpr Colour kBlack{0.04, 0.04, 0.04, 1.0};
constexpr Colour kGrey{0.50, 0.52, 0.54, 1.0};

Mesh mesh(const std::string& name, Colour colour) {
  Mesh m;
  m.name = name;
  m.colour = colour;
  return m;
}

// One track unit in its frame (centre of the track, wheel-axle height): rear sprocket with teeth,
// front idler, three road wheels, upper and lower belt runs and the side frame. 1.2 × 0.15 × 0.3 m.
Mesh track(const std::string& name) {
  constexpr double kWheelR = 0.15;  // sprocket and idler radius: the track's half height
  constexpr double kAxleX = 0.45;   // sprocket at -x, idler at +x
  constexpr double kWidth = 0.15;
  Mesh m = mesh(name, kBlack);
  m.cylinder({-kAxleX, 0, 0}, kY, kWheelR - 0.02, kWidth);
  m.cylinder({kAxleX, 0, 0}, kY, kWheelR, kWidth);
  for (const double x : {-0.2, 0.0, 0.2}) m.cylinder({x, 0, -0.08}, kY, 0.06, kWidth * 0.8);
  m.box(Vec3(-kAxleX, -kWidth / 2, kWheelR - 0.03), Vec3(kAxleX, kWidth / 2, kWheelR));
  m.box(Vec3(-kAxleX, -kWidth / 2, -kWheelR), Vec3(kAxleX, kWidth / 2, -kWheelR + 0.03));
  m.box(Vec3(-kAxleX, -kWidth / 4, -0.06), Vec3(kAxleX, kWidth / 4, 0.08));
  // Sprocket teeth: 12 blocks around the rear wheel, reaching the belt's outer radius.
  for (int k = 0; k < 12; ++k) {
    Eigen::Isometry3d pose = Eigen::Isometry3d::Identity();
    pose.rotate(Eigen::AngleAxisd(2.0 * std::numbers::pi * k / 12.0, kY));
    pose.pretranslate(Vec3(-kAxleX, 0, 0));
    pose.translate(Vec3(0, 0, kWheelR - 0.025));
    m.box(pose, Vec3(0.035, kWidth, 0.05));
  }
  return m;
}

}  // namespace

Model mf4Robot() {
  Model model{"mf4", {}};
  // Chassis: hull between the tracks, frame on the ground below the hull's centre.
  {
    Link chassis{"chassis", "", "free", Vec3::Zero(), Vec3::Zero(), 200.0, {}};
    Mesh hull = mesh("chassis", kOlive);
    hull.box(Vec3(-0.50, -0.20, 0.08), Vec3(0.50, 0.20, 0.35));
    hull.box(Vec3(0.50, -0.18, 0.12), Vec3(0.56, 0.18, 0.30));  // front bumper
    chassis.meshes.push_back(hull);
    model.links.push_back(chassis);
  }
  // Tracks: fixed to the chassis, frames at the sprocket/idler axle height on the track's centre.
  for (const auto& [name, y] : {std::pair{"track_left", 0.275}, std::pair{"track_right", -0.275}}) {
    Link link{name, "chassis", "fixed", Vec3::Zero(), Vec3(0, y, 0.15), 20.0, {}};
    link.meshes.push_back(track(name));
    model.links.push_back(link);
  }
  // Turret: yaw bearing on the hull's top, pedestal and a clevis holding the shoulder axis.
  {
    Link turret{"turret", "chassis", "revolute", kZ, Vec3(0.20, 0, 0.35), 18.0, {}};
    Mesh m = mesh("turret", kDarkGreen);
    m.cylinder({0, 0, 0.04}, kZ, 0.16, 0.08);
    m.box(Vec3(-0.10, -0.10, 0.08), Vec3(0.10, 0.10, 0.14));
    for (const double s : {1.0, -1.0}) {
      m.box(Vec3(-0.07, s > 0 ? 0.08 : -0.10, 0.12), Vec3(0.07, s > 0 ? 0.10 : -0.08, 0.26));
    }
    turret.meshes.push_back(m);
    model.links.push_back(turret);
  }
  // Upper arm, 0.75 m from the shoulder axis to the elbow axis.
  {
    Link link{"shoulder", "turret", "revolute", kY, Vec3(0.20, 0, 0.55), 14.0, {}};
    Mesh m = mesh("shoulder", kGrey);
    m.cylinder(Vec3::Zero(), kY, 0.06, 0.15);
    m.box(Vec3(0.0, -0.045, -0.05), Vec3(0.75, 0.045, 0.05));
    m.cylinder({0.75, 0, 0}, kY, 0.055, 0.15);
    link.meshes.push_back(m);
    model.links.push_back(link);
  }
  // Forearm, 0.65 m from the elbow axis to the wrist pitch axis.
  {
    Link link{"elbow", "shoulder", "revolute", kY, Vec3(0.95, 0, 0.55), 8.0, {}};
    Mesh m = mesh("elbow", kGrey);
    m.cylinder(Vec3::Zero(), kY, 0.05, 0.12);
    m.box(Vec3(0.0, -0.035, -0.04), Vec3(0.65, 0.035, 0.04));
    link.meshes.push_back(m);
    model.links.push_back(link);
  }
  // Wrist pitch housing, 0.12 m to the roll bearing.
  {
    Link link{"wrist_pitch", "elbow", "revolute", kY, Vec3(1.60, 0, 0.55), 3.0, {}};
    Mesh m = mesh("wrist_pitch", kDarkGrey);
    m.cylinder(Vec3::Zero(), kY, 0.04, 0.10);
    m.box(Vec3(0.0, -0.04, -0.04), Vec3(0.12, 0.04, 0.04));
    link.meshes.push_back(m);
    model.links.push_back(link);
  }
  // Wrist roll and gripper palm, 0.10 m to the jaw pivots.
  {
    Link link{"wrist_roll", "wrist_pitch", "revolute", kX, Vec3(1.72, 0, 0.55), 2.5, {}};
    Mesh m = mesh("wrist_roll", kDarkGrey);
    m.cylinder({0.03, 0, 0}, kX, 0.045, 0.06);
    m.box(Vec3(0.06, -0.08, -0.04), Vec3(0.10, 0.08, 0.04));
    link.meshes.push_back(m);
    model.links.push_back(link);
  }
  // Jaws: 0.18 m fingers hinged about z at y = ±0.05, parallel at zero angle.
  for (const auto& [name, y] : {std::pair{"jaw_left", 0.05}, std::pair{"jaw_right", -0.05}}) {
    Link link{name, "wrist_roll", "revolute", kZ, Vec3(1.82, y, 0.55), 0.6, {}};
    Mesh m = mesh(name, kOrange);
    m.cylinder(Vec3::Zero(), kZ, 0.015, 0.06, 12);
    m.box(Vec3(0.0, -0.01, -0.03), Vec3(0.18, 0.01, 0.03));
    link.meshes.push_back(m);
    model.links.push_back(link);
  }
  return model;
}

Model container() {
  // Frame at the bottom centre; body 0.4 × 0.3 × 0.3 m, a bar handle 0.08 m above the lid.
  Link link{"container", "", "free", Vec3::Zero(), Vec3::Zero(), 10.0, {}};
  Mesh body = mesh("container_body", Colour{0.36, 0.42, 0.48, 1.0});
  body.box(Vec3(-0.20, -0.15, 0.0), Vec3(0.20, 0.15, 0.30));
  Mesh handle = mesh("container_handle", kBlack);
  for (const double x : {-0.09, 0.09}) {
    handle.box(Vec3(x - 0.01, -0.015, 0.30), Vec3(x + 0.01, 0.015, 0.35));
  }
  handle.box(Vec3(-0.11, -0.015, 0.35), Vec3(0.11, 0.015, 0.38));
  link.meshes = {body, handle};
  return Model{"container", {link}};
}

Model site() {
  Model model{"site", {}};
  // Floor: 20 × 20 m slab, top face at z = 0.
  {
    Link floor{"floor", "", "static", Vec3::Zero(), Vec3::Zero(), 0.0, {}};
    Mesh m = mesh("floor", Colour{0.55, 0.55, 0.52, 1.0});
    m.box(Vec3(-10, -10, -0.1), Vec3(10, 10, 0.0));
    floor.meshes.push_back(m);
    model.links.push_back(floor);
  }
  // Ramp: 15° incline rising 0.8 m along +x, 2 m wide; frame at the foot's centre line.
  const double rise = 0.8;
  const double run = rise / std::tan(15.0 * std::numbers::pi / 180.0);
  {
    Link ramp{"ramp", "", "static", Vec3::Zero(), Vec3(2.0, 5.0, 0.0), 0.0, {}};
    Mesh m = mesh("ramp", Colour{0.75, 0.62, 0.15, 1.0});
    m.wedge(run, rise, 2.0);
    ramp.meshes.push_back(m);
    model.links.push_back(ramp);
  }
  // Platform at the ramp's top: 2 × 2 m deck, 0.8 m high; frame at its bottom centre.
  {
    Link deck{"platform", "", "static", Vec3::Zero(), Vec3(2.0 + run + 1.0, 5.0, 0.0), 0.0, {}};
    Mesh m = mesh("platform", Colour{0.45, 0.47, 0.50, 1.0});
    m.box(Vec3(-1.0, -1.0, 0.0), Vec3(1.0, 1.0, rise));
    deck.meshes.push_back(m);
    model.links.push_back(deck);
  }
  // Shelf for the container: 1.0 × 0.6 m top at 0.8 m on four legs; frame at its bottom centre.
  {
    Link shelf{"shelf", "", "static", Vec3::Zero(), Vec3(3.0, -3.0, 0.0), 0.0, {}};
    Mesh m = mesh("shelf", Colour{0.20, 0.30, 0.55, 1.0});
    m.box(Vec3(-0.5, -0.3, 0.76), Vec3(0.5, 0.3, 0.80));
    for (const double x : {-0.46, 0.46}) {
      for (const double y : {-0.26, 0.26}) {
        m.box(Vec3(x - 0.03, y - 0.03, 0.0), Vec3(x + 0.03, y + 0.03, 0.76));
      }
    }
    shelf.meshes.push_back(m);
    model.links.push_back(shelf);
  }
  return model;
}

}  // namespace sim::assetgen
