// Internal to the assetgen tool: the generated models as links of single-colour meshes, in our
// frame (z up, x forward, metres). Dimensions and assumptions are listed in assets/README.md.
#pragma once

#include "geometry.h"

#include <string>
#include <vector>

namespace sim::assetgen {

/// One rigid part. Its frame has the model's axes in the rest pose and sits at `origin` (model
/// frame): the joint's axis point for robot links. Meshes are in the link frame.
struct Link {
  std::string name;
  std::string parent;        ///< Link it is jointed to; empty for a free or static root.
  std::string joint;         ///< "free", "fixed", "revolute" or "static".
  Vec3 axis = Vec3::Zero();  ///< Joint axis in the link frame (revolute only).
  Vec3 origin = Vec3::Zero();
  double mass = 0.0;  ///< kg; 0 for static scenery.
  std::vector<Mesh> meshes;
};

/// A model file: a root node "<name>_model" with one child node per link (a flat tree, so that
/// each link's subtree holds only its own meshes).
struct Model {
  std::string name;
  std::vector<Link> links;
};

Model mf4Robot();
Model container();
Model site();

}  // namespace sim::assetgen
