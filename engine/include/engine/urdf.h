// Robots from URDF files (docs/scenes.md, "Robots from URDF"): a scene includes a .urdf file as
// it includes a robot YAML file, and loadScene() takes a .urdf file as a scene of its own. This
// header holds the one process-wide setting of that: where `package://NAME/...` resources are.
#pragma once

#include <string>
#include <vector>

namespace sim::engine {

/// Directories searched first for the packages named by `package://NAME/...` in URDF files
/// (`simtrainer --package-path DIR`, repeatable), before those of the ROS_PACKAGE_PATH
/// environment variable and the URDF file's own directory and those above it. A directory is a
/// package named NAME when its name is NAME or its package.xml says <name>NAME</name>; it holds
/// one when a directory below it (at most 4 levels down) is. Process-wide, like
/// ROS_PACKAGE_PATH: set it before loading scenes.
void setPackagePath(std::vector<std::string> dirs);
std::vector<std::string> packagePath();

}  // namespace sim::engine
