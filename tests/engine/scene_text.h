// Scene texts that several engine tests build on, written once. The error tests count lines, so
// each function says on which line its parts fall.
#pragma once

#include <string>

namespace sim::engine::testing {

// `bodies:` with one body `name` of 1 kg in a 1 m cube, block style: line 1 `bodies:`, 2 the name,
// 3 the mass, 4 the box; `more` follows from line 5 (further keys of the body, indented 4 spaces).
inline std::string unitBoxScene(const std::string& more, const std::string& name = "b") {
  return "bodies:\n  - name: " + name + "\n    mass: 1\n    box: [1, 1, 1]\n" + more;
}

// The same body in flow style: line 1 `bodies:`, line 2 the body; `more` follows from line 3.
inline std::string unitBoxLine(const std::string& more, const std::string& name = "cart") {
  return "bodies:\n  - {name: " + name + ", mass: 1, box: [1, 1, 1]}\n" + more;
}

// One link (2 kg, 1 x 0.2 x 0.1 m box, centre 1 m out along x) hinged to the world at the origin
// about z, driven by a motor `drive` with the passport `passport` (by default Mp 0.2 N m, w_xx
// 5 rad/s, t_m 0.1 s, r 50) and the further keys `motor_keys` (", key: value, ..."); flow style,
// six lines: bodies, joints, motors (the motor on line 6).
inline std::string hingedLinkScene(
    const std::string& motor_keys = "",
    const std::string& passport = "Mp: 0.2, w_xx: 5.0, t_m: 0.1, r: 50") {
  return "bodies:\n"
         "  - {name: link, mass: 2.0, box: [1.0, 0.2, 0.1], position: [1, 0, 0]}\n"
         "joints:\n"
         "  - {name: hinge, type: hinge, parent: world, child: link, anchor: [0, 0, 0], axis: [0, "
         "0, 1]}\n"
         "motors:\n"
         "  - {name: drive, joint: hinge, " +
         passport + motor_keys + "}\n";
}

}  // namespace sim::engine::testing
