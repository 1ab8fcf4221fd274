// Internal header, not API: a window's keys read on a thread of their own. OpenSceneGraph reads
// its window's events only between frames, so under a slow rasteriser a key would wait for the
// frame being drawn (40-160 ms under llvmpipe with shadows). A second X connection that selects
// only key and focus events on the same window gets them the moment they arrive; the X protocol
// lets several clients select key events on one window. Both connections are used by one thread
// each, so Xlib needs no locking between them.
#pragma once

#include <render/view.h>

#include <memory>

namespace osg {
class GraphicsContext;
}

namespace sim::render {

class WindowKeys {
 public:
  virtual ~WindowKeys() = default;
};

/// Starts reading the keys of `context`'s window (an X11 window) on a new thread, calling
/// `handler` there with OpenSceneGraph key symbols (X keysyms of the unshifted key) and, when the
/// window loses the keyboard focus, with kAllKeysUp. Returns null for a context that is not an
/// X11 window. Throws RenderError when the second connection cannot be opened.
std::unique_ptr<WindowKeys> startWindowKeys(osg::GraphicsContext& context, KeyHandler handler);

/// The X window id of `context`, or 0 when it is not an X11 window (a pixel buffer).
unsigned long nativeWindowId(osg::GraphicsContext& context);

}  // namespace sim::render
