// Test helper: an SDL virtual joystick (SDL_JoystickAttachVirtualEx) that tests move by hand, as a
// user would move a real one. Needs the SDL joystick subsystem up (an InputSystem keeps it up).
#pragma once

#include <SDL.h>

#include <stdexcept>
#include <string>

namespace sim::input::test {

class VirtualDevice {
 public:
  VirtualDevice(const char* name, int axes, int buttons, int hats,
                SDL_JoystickType type = SDL_JOYSTICK_TYPE_UNKNOWN, Uint16 product = 0x5678) {
    SDL_VirtualJoystickDesc desc{};
    desc.version = SDL_VIRTUAL_JOYSTICK_DESC_VERSION;
    desc.type = static_cast<Uint16>(type);
    desc.naxes = static_cast<Uint16>(axes);
    desc.nbuttons = static_cast<Uint16>(buttons);
    desc.nhats = static_cast<Uint16>(hats);
    desc.vendor_id = 0x1234;
    desc.product_id = product;
    desc.name = name;
    const int index = SDL_JoystickAttachVirtualEx(&desc);
    if (index < 0) throw std::runtime_error(std::string("attach failed: ") + SDL_GetError());
    instance_ = SDL_JoystickGetDeviceInstanceID(index);
    joystick_ = SDL_JoystickOpen(index);
    if (!joystick_) throw std::runtime_error(std::string("open failed: ") + SDL_GetError());
  }
  ~VirtualDevice() { detach(); }
  VirtualDevice(const VirtualDevice&) = delete;
  VirtualDevice& operator=(const VirtualDevice&) = delete;

  void axis(int a, Sint16 value) { SDL_JoystickSetVirtualAxis(joystick_, a, value); }
  void button(int b, bool down) { SDL_JoystickSetVirtualButton(joystick_, b, down ? 1 : 0); }
  void hat(int h, Uint8 value) { SDL_JoystickSetVirtualHat(joystick_, h, value); }
  std::string guid() const {
    char text[33] = {};
    SDL_JoystickGetGUIDString(SDL_JoystickGetGUID(joystick_), text, sizeof text);
    return text;
  }

  // Unplugs it (device indices shift as devices come and go, so find ours by instance).
  void detach() {
    if (!joystick_) return;
    SDL_JoystickClose(joystick_);
    joystick_ = nullptr;
    for (int i = 0; i < SDL_NumJoysticks(); ++i) {
      if (SDL_JoystickGetDeviceInstanceID(i) == instance_) SDL_JoystickDetachVirtual(i);
    }
  }

 private:
  SDL_Joystick* joystick_ = nullptr;
  SDL_JoystickID instance_ = -1;
};

// The GUID SDL gives a virtual device of this name, type and product, found by attaching one
// briefly in its own SDL session.
inline std::string virtualGuid(const char* name, int axes, int buttons, int hats,
                               SDL_JoystickType type = SDL_JOYSTICK_TYPE_UNKNOWN,
                               Uint16 product = 0x5678) {
  SDL_InitSubSystem(SDL_INIT_JOYSTICK);
  std::string guid;
  {
    VirtualDevice d(name, axes, buttons, hats, type, product);
    guid = d.guid();
  }
  SDL_QuitSubSystem(SDL_INIT_JOYSTICK);
  return guid;
}

}  // namespace sim::input::test
