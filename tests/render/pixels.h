// Shared by the render tests: bounding boxes of pixels in pictures and of projected points.
#pragma once

#include <render/view.h>

#include <algorithm>

namespace sim::render_testing {

/// An axis-aligned box in pixel coordinates (x right, y down).
struct Box2 {
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  void add(double x, double y) {
    x0 = std::min(x0, x);
    y0 = std::min(y0, y);
    x1 = std::max(x1, x);
    y1 = std::max(y1, y);
  }
};

/// Bounding box of a mask's white pixels, and their count.
inline Box2 whitePixels(const render::RgbImage& mask, int* count) {
  Box2 box;
  *count = 0;
  for (int y = 0; y < mask.height; ++y) {
    for (int x = 0; x < mask.width; ++x) {
      if (mask.pixel(x, y)[0] > 128) {
        box.add(x, y);
        ++*count;
      }
    }
  }
  return box;
}

}  // namespace sim::render_testing
