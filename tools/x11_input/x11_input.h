// Synthetic X11 input for tests and benchmarks: real key events through the X server (XTest), as
// a keyboard would type them, and a window manager's close request. Not part of the product.
#pragma once

#include <string>

struct _XDisplay;

namespace sim::x11_input {

class SyntheticInput {
 public:
  /// Connects to the display in DISPLAY; throws std::runtime_error when there is none or it
  /// lacks the XTEST extension.
  SyntheticInput();
  ~SyntheticInput();
  SyntheticInput(const SyntheticInput&) = delete;
  SyntheticInput& operator=(const SyntheticInput&) = delete;

  /// Gives `window` (an X window id) the keyboard focus; waits until the server has done it.
  void focus(unsigned long window);
  /// Presses or releases the key of an X keysym (e.g. 0xffc6 for F9), sent at once.
  void key(unsigned long keysym, bool down);
  /// Asks `window` to close, as a window manager's close button does (WM_DELETE_WINDOW).
  void requestClose(unsigned long window);

 private:
  _XDisplay* display_ = nullptr;
};

}  // namespace sim::x11_input
