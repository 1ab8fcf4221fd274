#!/usr/bin/env bash
# Installs every Debian package the project needs. Idempotent: runs `apt-get update` once and
# installs only what is missing. The list is the single source of truth; README explains each.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache git
  clang-format                  # scripts/check-format.sh: the C++ format, checked by the test script
  libeigen3-dev                 # dynamics: linear algebra (the only dependency of dynamics/)
  libopenscenegraph-dev         # render: 3D scene graph
  libsdl2-dev                   # input: joysticks, game controllers, keyboard
  libassimp-dev                 # scene: 3D model files (glTF, OBJ, 3DS, FBX, COLLADA)
  libyaml-cpp-dev               # scene: YAML scene files with line numbers in errors
  liburdfdom-dev libtinyxml-dev libconsole-bridge-dev  # scene: URDF robots (urdfdom; its TinyXML gives element lines, console_bridge its messages)
  libcli11-dev                  # simtrainer: command line with subcommands and --help
  libspdlog-dev libfmt-dev      # logging and formatting
  libgtest-dev libgmock-dev     # tests
  libbenchmark-dev              # bench/
  python3                       # tests: checks that JUnit output parses as XML
  fonts-dejavu-core             # render: HUD text
  libfastrtps-dev libfastcdr-dev fastddsgen default-jre-headless  # network: DDS (docs/network.md)
  iptables libnetfilter-queue-dev  # tests/net: a misbehaving network (loss, delay, partition) in user space: iptables NFQUEUE target (this kernel has neither sch_netem nor nft queue)
  libssl-dev                    # network: a secured class's certificates and signed XML (libcrypto)
  gnuplot-nox                   # docs/validation figures (scripts/validation-figures.sh)
  xvfb xauth libgl1-mesa-dri libglx-mesa0 libgl-dev  # headless rendering tests (Mesa llvmpipe)
  libx11-dev                    # render: a window's keys read on a thread of their own (Xlib)
  libxtst-dev                   # tests, bench_realtime: real key events typed into a window (XTest)
  nlohmann-json3-dev            # engine: session result files (JSON)
  python3-jsonschema            # tests: result files validated against docs/schemas/
  chromium                      # tests: the after-action report opened in headless Chromium
  python3-pil                   # tests: pixels of the report's screenshot in Chromium
  pybind11-dev python3-dev      # python/: the `simtrainer` Python module (C++ bindings)
  python3-numpy                 # python/: poses, joints, motors and traces as NumPy arrays
  python3-pytest                # tests/python: the module's tests and examples/python's scenarios
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
