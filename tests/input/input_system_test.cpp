// The input system against SDL2's virtual joysticks (real SDL device handling, no display needed):
// axis shaping, gamepad mappings from SDL_GAMECONTROLLERCONFIG and a database file, hot unplug and
// replug, raw-joystick calibration by GUID, hats, and the keyboard layout fed with key events.
#include <input/input_system.h>
#include <input/mapping.h>
#include <input/names.h>

#include "virtual_device.h"

#include <SDL.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sim::input {
namespace {

using test::VirtualDevice;

ControlSpec axis(const char* name, double min = -1.0, double max = 1.0, double initial = 0.0) {
  return {name, ControlKind::Axis, min, max, initial, 2};
}
ControlSpec control(const char* name, ControlKind kind, int positions = 2, double initial = 0.0) {
  return {name, kind, 0.0, 1.0, initial, positions};
}
Source devAxis(int device, int index) {
  return {Source::Kind::Axis, device, index, 0};
}
Source devButton(int device, int index) {
  return {Source::Kind::Button, device, index, 0};
}
Source devHat(int device, int index, int dir) {
  return {Source::Kind::Hat, device, index, dir};
}
Source key(const char* name) {
  return {Source::Kind::Key, -1, *keyFromName(name), 0};
}

Binding bind(int control, Source s, DigitalAction action = DigitalAction::Press) {
  Binding b;
  b.control = control;
  b.source = s;
  b.action = action;
  return b;
}

std::vector<double> sample(InputSystem& input, double dt = 1.0 / 60.0) {
  std::vector<double> values(input.mapping().controls.size(), -99.0);  // unbound stay -99
  input.sample(dt, values);
  return values;
}

TEST(InputSystem, JoystickAxesThroughDeadZoneExpoAndInvert) {
  Mapping m;
  m.controls = {axis("lift"), axis("throttle", 0.0, 2.0, 0.0), axis("free")};
  m.devices = {{"stick", DeviceKind::Joystick, "Test Stick", ""}};
  Binding lift = bind(0, devAxis(0, 0));
  lift.shape.dead_zone = 0.2;
  lift.shape.expo = 0.5;
  Binding throttle = bind(1, devAxis(0, 1));
  throttle.shape.invert = true;
  m.bindings = {lift, throttle};
  InputSystem input(m);
  // Devices must report while no window of ours has focus (there is none at all here).
  ASSERT_NE(SDL_GetHint(SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS), nullptr);
  EXPECT_STREQ(SDL_GetHint(SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS), "1");
  VirtualDevice stick("Test Stick", 2, 0, 0);
  auto v = sample(input);
  ASSERT_TRUE(input.devices()[0].connected);
  EXPECT_EQ(v[2], -99.0) << "an unbound control is left alone";

  stick.axis(0, 3000);    // n = 0.09: inside the dead zone
  stick.axis(1, -32768);  // n = -1, inverted: +1 -> max
  v = sample(input);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_DOUBLE_EQ(v[1], 2.0);

  // n = 0.6: past the dead zone (0.6 - 0.2) / 0.8 = 0.5, expo 0.5: 0.25 + 0.5 * 0.125 = 0.3125.
  stick.axis(0, 19660);
  stick.axis(1, 16384);  // n = 0.5, inverted -0.5: below neutral, but neutral is the minimum
  v = sample(input);
  EXPECT_NEAR(v[0], 0.3125, 1e-4);
  EXPECT_DOUBLE_EQ(v[1], 0.0);

  stick.axis(0, -32768);  // full travel stays full travel through dead zone and curve
  stick.axis(1, -16384);  // inverted +0.5: halfway from neutral 0 to max 2
  v = sample(input);
  EXPECT_DOUBLE_EQ(v[0], -1.0);
  EXPECT_NEAR(v[1], 1.0, 1e-4);
}

// A device SDL does not know as a gamepad becomes one through a mapping line.
std::string mappingLine(const std::string& guid) {
  return guid + ",Sim Pad Mapped,a:b0,b:b1,leftx:a0,lefty:a1,";
}

Mapping padMapping(const std::string& guid) {
  Mapping m;
  m.controls = {axis("lift"), control("grip", ControlKind::Button)};
  m.devices = {{"pad", DeviceKind::Gamepad, "", guid}};
  m.bindings = {bind(0, devAxis(0, *gamepadAxisFromName("lefty"))),
                bind(1, devButton(0, *gamepadButtonFromName("a")))};
  return m;
}

void expectPadDrives(InputSystem& input, VirtualDevice& pad) {
  auto v = sample(input);
  ASSERT_TRUE(input.devices()[0].connected) << "the mapped pad is opened as a game controller";
  EXPECT_EQ(input.devices()[0].name, "Sim Pad Mapped");
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 0.0);
  pad.axis(1, 32767);   // raw axis 1 is the pad's lefty
  pad.button(0, true);  // raw button 0 is its a
  v = sample(input);
  EXPECT_DOUBLE_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], 1.0);
}

TEST(InputSystem, GamepadRecognisedThroughSdlGameControllerConfig) {
  const std::string guid = test::virtualGuid("Sim Pad", 2, 2, 0);
  {
    // Without a mapping SDL sees only a joystick, and a gamepad spec does not take it.
    InputSystem input(padMapping(guid));
    VirtualDevice pad("Sim Pad", 2, 2, 0);
    sample(input);
    EXPECT_FALSE(input.devices()[0].connected);
  }
  ASSERT_EQ(setenv("SDL_GAMECONTROLLERCONFIG", mappingLine(guid).c_str(), 1), 0);
  {
    InputSystem input(padMapping(guid));
    VirtualDevice pad("Sim Pad", 2, 2, 0);
    expectPadDrives(input, pad);
  }
  unsetenv("SDL_GAMECONTROLLERCONFIG");
}

TEST(InputSystem, GamepadRecognisedThroughDatabaseFile) {
  const std::string guid = test::virtualGuid("Sim Pad", 2, 2, 0);
  const auto db =
      std::filesystem::temp_directory_path() / "simtrainer_input_test_gamecontrollerdb.txt";
  {
    std::ofstream out(db);
    out << "# a comment line, as in the community database\n"
        << "03000000ffffffffffff000000000000,Other Pad,a:b0,platform:Windows,\n"
        << mappingLine(guid) << "platform:Linux,\n";
  }
  InputOptions options;
  options.gamecontrollerdb = db.string();
  InputSystem input(padMapping(guid), options);
  EXPECT_EQ(input.loadedMappings(), 1) << "the Windows line is not for this platform";
  VirtualDevice pad("Sim Pad", 2, 2, 0);
  expectPadDrives(input, pad);
  std::filesystem::remove(db);
}

TEST(InputSystem, RefusesBindingsToNothing) {
  Mapping m;
  m.file = "code";
  m.controls = {axis("lift")};
  m.bindings = {bind(0, devAxis(3, 0))};  // no device 3
  EXPECT_THROW(InputSystem{m}, InputError);
  m.bindings = {bind(1, key("Up"))};  // no control 1
  EXPECT_THROW(InputSystem{m}, InputError);
  m.bindings = {bind(0, Source{})};  // no input at all
  EXPECT_THROW(InputSystem{m}, InputError);
}

TEST(InputSystem, MissingDatabaseFileIsAClearError) {
  InputOptions options;
  options.gamecontrollerdb = "/nonexistent/gamecontrollerdb.txt";
  try {
    InputSystem input(Mapping{}, options);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/gamecontrollerdb.txt"), std::string::npos)
        << e.what();
  }
}

TEST(InputSystem, UnplugReturnsControlsToNeutralInTheSameSampleAndReplugPicksUp) {
  Mapping m;
  m.controls = {axis("lift", -1.0, 1.0, 0.25),
                control("lights", ControlKind::Toggle),
                control("gear", ControlKind::Switch, 4, 1.0),
                control("horn", ControlKind::Button),
                control("brake", ControlKind::Button),
                control("pump", ControlKind::Toggle, 2, 1.0)};
  m.devices = {{"panel", DeviceKind::Joystick, "Test Panel", ""}};
  m.bindings = {bind(0, devAxis(0, 0)),
                bind(1, devButton(0, 0), DigitalAction::Toggle),
                bind(2, devButton(0, 1), DigitalAction::Position),
                bind(3, devButton(0, 2)),
                bind(4, key("B")),
                bind(5, devButton(0, 2), DigitalAction::Hold)};
  m.bindings[2].position = 3;
  InputSystem input(m);
  auto panel = std::make_unique<VirtualDevice>("Test Panel", 1, 3, 0);
  auto v = sample(input);
  EXPECT_DOUBLE_EQ(v[0], 0.25) << "a centred axis reads the control's initial value";
  panel->axis(0, -32768);
  panel->button(0, true);
  panel->button(1, true);
  panel->button(2, true);
  input.keyEvent(*keyFromName("B"), true);
  v = sample(input);
  EXPECT_EQ(v, (std::vector<double>{-1.0, 1.0, 3.0, 1.0, 1.0, 1.0}));

  panel->detach();
  v = sample(input);  // the very next sample
  EXPECT_FALSE(input.devices()[0].connected);
  EXPECT_EQ(v, (std::vector<double>{0.25, 0.0, 1.0, 0.0, 1.0, 1.0}))
      << "everything on the panel back to initial; the keyboard's brake is still held";

  panel = std::make_unique<VirtualDevice>("Test Panel", 1, 3, 0);
  panel->axis(0, 32767);
  v = sample(input);
  EXPECT_TRUE(input.devices()[0].connected) << "replugged: claimed again by name";
  EXPECT_DOUBLE_EQ(v[0], 1.0);
  panel->button(0, true);
  v = sample(input);
  EXPECT_EQ(v[1], 1.0) << "the replugged panel's buttons work again";
  EXPECT_EQ(v[5], 0.0) << "the hold input reads its switch (off) again";
}

TEST(InputSystem, GuidMatchWinsOverName) {
  // Two devices of the same name with different GUIDs (product ids). The name-only spec comes
  // first and would take whichever it saw first; the GUID spec still gets its own device.
  const std::string guid_b = test::virtualGuid("Twin", 1, 0, 0, SDL_JOYSTICK_TYPE_UNKNOWN, 0x0002);
  Mapping m;
  m.controls = {axis("a"), axis("b")};
  m.devices = {{"by_name", DeviceKind::Joystick, "Twin", ""},
               {"by_guid", DeviceKind::Joystick, "", guid_b}};
  m.bindings = {bind(0, devAxis(0, 0)), bind(1, devAxis(1, 0))};
  InputSystem input(m);
  VirtualDevice b("Twin", 1, 0, 0, SDL_JOYSTICK_TYPE_UNKNOWN, 0x0002);
  VirtualDevice a("Twin", 1, 0, 0, SDL_JOYSTICK_TYPE_UNKNOWN, 0x0001);
  ASSERT_NE(a.guid(), guid_b);
  a.axis(0, -32768);
  b.axis(0, 32767);
  const auto v = sample(input);
  EXPECT_EQ(input.devices()[1].guid, guid_b);
  EXPECT_DOUBLE_EQ(v[0], -1.0);
  EXPECT_DOUBLE_EQ(v[1], 1.0);
}

TEST(InputSystem, RawJoystickCalibrationByGuid) {
  const std::string guid = test::virtualGuid("Pedals", 2, 0, 0);
  Mapping m;
  m.controls = {axis("calibrated"), axis("plain")};
  m.devices = {{"pedals", DeviceKind::Joystick, "Pedals", ""},
               {"other", DeviceKind::Joystick, "Other Pedals", ""}};
  m.calibrations = {{guid, {{0, -20000.0, 1000.0, 21000.0}, {1, -30000.0, -30000.0, 30000.0}}}};
  m.controls.push_back(axis("brake", 0.0, 1.0, 0.0));
  m.bindings = {bind(0, devAxis(0, 0)), bind(1, devAxis(1, 0)), bind(2, devAxis(0, 1))};
  InputSystem input(m);
  VirtualDevice pedals("Pedals", 2, 0, 0), other("Other Pedals", 1, 0, 0);
  ASSERT_NE(other.guid(), guid);
  const std::pair<Sint16, double> cases[] = {{1000, 0.0},   {21000, 1.0},   {11000, 0.5},
                                             {-9500, -0.5}, {-20000, -1.0}, {-32768, -1.0}};
  for (const auto& [raw, expected] : cases) {
    pedals.axis(0, raw);
    other.axis(0, raw);
    const auto v = sample(input);
    EXPECT_DOUBLE_EQ(v[0], expected) << "raw " << raw;
    EXPECT_NEAR(v[1], std::max(-1.0, raw / 32767.0), 1e-12) << "uncalibrated GUID, raw " << raw;
  }
  // A pedal resting at one end (centre = min) reads 0 .. 1 over its travel.
  const std::pair<Sint16, double> pedal[] = {{-30000, 0.0}, {-32768, 0.0}, {0, 0.5}, {30000, 1.0}};
  for (const auto& [raw, expected] : pedal) {
    pedals.axis(1, raw);
    EXPECT_DOUBLE_EQ(sample(input)[2], expected) << "pedal raw " << raw;
  }
}

TEST(InputSystem, HatsDriveSwitchesAndAxisPairs) {
  Mapping m;
  m.controls = {control("mode", ControlKind::Switch, 3), axis("slew")};
  m.devices = {{"panel", DeviceKind::Joystick, "Hat Panel", ""}};
  Binding up = bind(0, devHat(0, 0, SDL_HAT_UP), DigitalAction::Step);
  Binding down = bind(0, devHat(0, 0, SDL_HAT_DOWN), DigitalAction::Step);
  down.step = -1;
  Binding slew;
  slew.control = 1;
  slew.negative = devHat(0, 0, SDL_HAT_LEFT);
  slew.positive = devHat(0, 0, SDL_HAT_RIGHT);
  m.bindings = {up, down, slew};
  InputSystem input(m);
  VirtualDevice panel("Hat Panel", 0, 0, 1);
  sample(input);
  panel.hat(0, SDL_HAT_UP);
  EXPECT_EQ(sample(input)[0], 1.0);
  EXPECT_EQ(sample(input)[0], 1.0) << "held: one press, one step";
  panel.hat(0, SDL_HAT_RIGHTUP);
  EXPECT_EQ(sample(input)[0], 1.0) << "up stays pressed when right joins it: no second step";
  panel.hat(0, SDL_HAT_CENTERED);
  sample(input);
  panel.hat(0, SDL_HAT_UP);
  EXPECT_EQ(sample(input)[0], 2.0);
  panel.hat(0, SDL_HAT_CENTERED);
  sample(input);
  panel.hat(0, SDL_HAT_UP);
  EXPECT_EQ(sample(input)[0], 2.0) << "clamped at the last position";
  panel.hat(0, SDL_HAT_LEFTDOWN);
  const auto v = sample(input);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], -1.0);
}

TEST(InputSystem, HoldFollowsALatchingSwitchAlongsideAToggleKey) {
  Mapping m;
  m.controls = {control("lights", ControlKind::Toggle)};
  m.devices = {{"panel", DeviceKind::Joystick, "Switch Panel", ""}};
  m.bindings = {bind(0, devButton(0, 0), DigitalAction::Hold),
                bind(0, key("L"), DigitalAction::Toggle), bind(0, key("H"), DigitalAction::Hold)};
  InputSystem input(m);
  VirtualDevice panel("Switch Panel", 0, 1, 0);
  EXPECT_EQ(sample(input)[0], 0.0);
  panel.button(0, true);
  EXPECT_EQ(sample(input)[0], 1.0) << "the panel switch turned on";
  input.keyEvent(*keyFromName("L"), true);
  EXPECT_EQ(sample(input)[0], 0.0) << "the toggle key still flips it while the switch stays on";
  input.keyEvent(*keyFromName("L"), false);
  EXPECT_EQ(sample(input)[0], 0.0);
  panel.button(0, false);
  EXPECT_EQ(sample(input)[0], 0.0);
  panel.button(0, true);
  EXPECT_EQ(sample(input)[0], 1.0);
  panel.button(0, false);
  EXPECT_EQ(sample(input)[0], 0.0);
  input.keyEvent(*keyFromName("H"), true);  // a tap shorter than a frame on a hold input
  input.keyEvent(*keyFromName("H"), false);
  EXPECT_EQ(sample(input)[0], 1.0) << "shows for one sample";
  EXPECT_EQ(sample(input)[0], 0.0) << "then off again";
}

TEST(InputSystem, DefaultKeyboardLayoutDrivesEveryControlKind) {
  const std::vector<ControlSpec> controls = {
      axis("lift"), control("grip", ControlKind::Button), control("lights", ControlKind::Toggle),
      control("gear", ControlKind::Switch, 3), axis("swing", 0.0, 2.0, 0.0)};
  std::vector<std::string> unbound;
  InputOptions options;
  options.sdl_keyboard = false;  // keys only through keyEvent, as from a window
  InputSystem input(defaultKeyboardMapping(controls, &unbound), options);
  EXPECT_TRUE(unbound.empty());
  const auto k = [](const char* name) { return *keyFromName(name); };
  auto v = sample(input, 0.1);
  EXPECT_EQ(v, (std::vector<double>{0.0, 0.0, 0.0, 0.0, 0.0}));

  // lift on Down/Up at 2 full deflections per second: 0.1 s per sample moves it by 0.2.
  input.keyEvent(k("Up"), true);
  input.keyEvent(k("Space"), true);
  input.keyEvent(k("Return"), true);
  input.keyEvent(k("PageUp"), true);
  input.keyEvent(k("Right"), true);  // swing on Left/Right, range [0, 2] from 0
  v = sample(input, 0.1);
  EXPECT_DOUBLE_EQ(v[0], 0.2);
  EXPECT_EQ(v[1], 1.0);
  EXPECT_EQ(v[2], 1.0);
  EXPECT_EQ(v[3], 1.0);
  EXPECT_DOUBLE_EQ(v[4], 0.4);
  input.keyEvent(k("Up"), true);  // a repeat: ignored
  for (int i = 0; i < 10; ++i) v = sample(input, 0.1);
  EXPECT_DOUBLE_EQ(v[0], 1.0) << "full deflection, clamped";
  EXPECT_EQ(v[2], 1.0) << "a toggle flips on the press, not while held";
  EXPECT_EQ(v[3], 1.0) << "a switch steps once per press";

  input.keyEvent(k("Up"), false);
  input.keyEvent(k("Space"), false);
  input.keyEvent(k("Return"), false);
  input.keyEvent(k("PageUp"), false);
  v = sample(input, 0.1);
  EXPECT_DOUBLE_EQ(v[0], 0.8) << "released: springs back at the same rate";
  EXPECT_EQ(v[1], 0.0);
  EXPECT_EQ(v[2], 1.0) << "a toggle stays where it was put";

  // Taps shorter than a frame: a button reads pressed for one sample; a toggle flips back.
  input.keyEvent(k("Space"), true);
  input.keyEvent(k("Space"), false);
  input.keyEvent(k("Return"), true);
  input.keyEvent(k("Return"), false);
  input.keyEvent(k("PageDown"), true);
  input.keyEvent(k("PageDown"), false);
  v = sample(input, 0.1);
  EXPECT_EQ(v[1], 1.0);
  EXPECT_EQ(v[2], 0.0);
  EXPECT_EQ(v[3], 0.0);
  EXPECT_EQ(sample(input, 0.1)[1], 0.0);

  // Focus lost with keys held: nothing stays stuck.
  input.keyEvent(k("Down"), true);
  input.keyEvent(k("Space"), true);
  for (int i = 0; i < 5; ++i) v = sample(input, 0.1);
  EXPECT_EQ(v[1], 1.0);
  EXPECT_LT(v[0], -0.3) << "Down held pulls lift below neutral";
  const double lift = v[0];
  input.releaseAllKeys();
  v = sample(input, 0.1);
  EXPECT_EQ(v[1], 0.0);
  EXPECT_NEAR(v[0], lift + 0.2, 1e-12) << "springing back toward neutral";
}

TEST(InputSystem, KeysFromSdlEventQueue) {
  Mapping m;
  m.controls = {control("grip", ControlKind::Button), axis("lift")};
  Binding lift;
  lift.control = 1;
  lift.negative = key("S");
  lift.positive = key("W");  // rate 0: jumps
  m.bindings = {bind(0, key("Space")), lift};
  InputSystem input(m);
  auto push = [](const char* name, bool down) {
    SDL_Event e{};
    e.type = down ? SDL_KEYDOWN : SDL_KEYUP;
    e.key.keysym.sym = *keyFromName(name);
    ASSERT_EQ(SDL_PushEvent(&e), 1) << SDL_GetError();
  };
  push("Space", true);
  push("S", true);
  auto v = sample(input);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], -1.0);
  push("S", false);
  push("Space", false);
  v = sample(input);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 0.0);
}

TEST(DefaultKeyboardMapping, DescribesEveryBindingAndReportsWhatIsLeft) {
  std::vector<ControlSpec> controls;
  for (int i = 0; i < 12; ++i) controls.push_back(axis(("a" + std::to_string(i)).c_str()));
  std::vector<std::string> unbound;
  const Mapping m = defaultKeyboardMapping(controls, &unbound);
  EXPECT_EQ(m.bindings.size(), 10u);
  EXPECT_EQ(unbound, (std::vector<std::string>{"a10", "a11"}));
  const auto lines = describeMapping(m);
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0], "a0: Down / Up (axis, 2 /s)");
}

}  // namespace
}  // namespace sim::input
