#include "window_keys.h"

#include <osgViewer/api/X11/GraphicsWindowX11>

#include <X11/XKBlib.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include <poll.h>
#include <unistd.h>
#include <cerrno>

#include <atomic>
#include <set>
#include <thread>

namespace sim::render {

namespace {

class X11WindowKeys : public WindowKeys {
 public:
  X11WindowKeys(const std::string& display_name, ::Window window, KeyHandler handler)
      : window_(window), handler_(std::move(handler)) {
    display_ = XOpenDisplay(display_name.empty() ? nullptr : display_name.c_str());
    if (display_ == nullptr)
      throw RenderError("cannot open a second X connection for the window's keys");
    if (::pipe(wake_) != 0) {
      XCloseDisplay(display_);
      throw RenderError("cannot make the key thread's wake pipe");
    }
    // A held key repeats as presses only (no release in between): the pult ignores repeats.
    Bool supported = False;
    XkbSetDetectableAutoRepeat(display_, True, &supported);
    XSelectInput(display_, window_, KeyPressMask | KeyReleaseMask | FocusChangeMask);
    XFlush(display_);
    thread_ = std::thread([this] { loop(); });
  }

  ~X11WindowKeys() override {
    stop_.store(true);
    const char byte = 1;
    [[maybe_unused]] const auto written = ::write(wake_[1], &byte, 1);
    if (thread_.joinable()) thread_.join();
    ::close(wake_[0]);
    ::close(wake_[1]);
    XCloseDisplay(display_);
  }

 private:
  void loop() {
    pollfd fds[2] = {{ConnectionNumber(display_), POLLIN, 0}, {wake_[0], POLLIN, 0}};
    while (!stop_.load()) {
      while (XPending(display_) > 0) {
        XEvent event;
        XNextEvent(display_, &event);
        if (event.xany.window != window_) continue;
        if (event.type == KeyPress || event.type == KeyRelease) {
          const KeySym symbol = XLookupKeysym(&event.xkey, 0);
          if (symbol == NoSymbol) continue;
          const bool down = event.type == KeyPress;
          // A held key's auto-repeat arrives as more presses: only the first is passed on.
          if (down ? !held_.insert(symbol).second : held_.erase(symbol) == 0) continue;
          handler_(static_cast<int>(symbol), down);
        } else if (event.type == FocusOut) {
          held_.clear();
          handler_(kAllKeysUp, false);
        }
      }
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    }
  }

  Display* display_ = nullptr;
  ::Window window_;
  KeyHandler handler_;
  std::set<KeySym> held_;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::unique_ptr<WindowKeys> startWindowKeys(osg::GraphicsContext& context, KeyHandler handler) {
  auto* window = dynamic_cast<osgViewer::GraphicsWindowX11*>(&context);
  if (window == nullptr || window->getWindow() == 0) return nullptr;
  const osg::GraphicsContext::Traits* traits = context.getTraits();
  const std::string name = traits != nullptr ? traits->displayName() : std::string();
  return std::make_unique<X11WindowKeys>(name, window->getWindow(), std::move(handler));
}

unsigned long nativeWindowId(osg::GraphicsContext& context) {
  auto* window = dynamic_cast<osgViewer::GraphicsWindowX11*>(&context);
  return window != nullptr ? window->getWindow() : 0;
}

}  // namespace sim::render
