// Randomized fuzzer of the scene loader: takes the committed scenes as a corpus, mutates them
// (bytes, tokens, numbers, lines, structure) and loads each mutant. The loader must either
// return a scene or throw SceneError/SceneInvalid with a located message; any other exception,
// a crash, a hang or a sanitizer report is a finding. The mutant that broke it is written out.
//
//   fuzz_scene [--seconds S] [--iterations N] [--seed K] [--out FILE] SCENE...
//
// CTest runs a short fixed-seed budget (deterministic); longer runs are by hand, best in a
// sanitizer build (-DSIMTRAINER_SANITIZE=ON). Exit code 0 clean, 1 finding, 2 usage.
#include <engine/scene.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using sim::engine::SceneError;
using sim::engine::SceneInvalid;

// Values that break careless parsers and converters.
const std::vector<std::string> kNastyValues = {
    "0",           "-0",         "-1",        "1e308", "-1e308",       "1e-320",
    "nan",         ".nan",       "inf",       "-.inf", "2147483648",   "4294967296",
    "-2147483649", "0x10",       "~",         "null",  "true",         "[]",
    "{}",          "[1, 2]",     "[[1]]",     "\"\"",  "''",           "*anchor",
    "&a 1",        "!!binary x", "a: b",      "- x",   "[1, 2, 3, 4]", "1e3",
    "world",       "default",    "pult.grip", "time",  "[nan, 0, 0]",  "[0, 0, 0]",
    "[1e9, 0, 0]"};

// Tokens that steer mutants into the loader's deeper paths.
const std::vector<std::string> kKeys = {
    "name",     "type",        "mass",   "density", "inertia",  "box",       "position",
    "rpy",      "orientation", "shapes", "joints",  "motors",   "repeaters", "include",
    "visual",   "file",        "node",   "cameras", "scheme",   "pult",      "blocks",
    "outputs",  "input",       "inputs", "signal",  "k",        "r",         "t_m",
    "Mp",       "w_xx",        "limits", "axis",    "anchor",   "parent",    "child",
    "body",     "belt",        "motor",  "points",  "vertices", "triangles", "static",
    "material", "materials",   "solver", "contact", "size"};

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : rng_(seed) {}

  std::string mutate(const std::string& base) {
    std::string text = base;
    const int rounds = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < rounds; ++i) text = once(text);
    return text;
  }

 private:
  std::size_t pick(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  static std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& line : lines) out += line + "\n";
    return out;
  }

  std::string once(std::string text) {
    if (text.empty())
      return kKeys[pick(kKeys.size())] + ": " + kNastyValues[pick(kNastyValues.size())];
    switch (pick(10)) {
      case 0: {  // flip a byte
        text[pick(text.size())] = static_cast<char>(pick(256));
        return text;
      }
      case 1: {  // delete a span
        const std::size_t at = pick(text.size());
        text.erase(at, 1 + pick(16));
        return text;
      }
      case 2: {  // insert a YAML-significant character
        static const std::string chars = ":-[]{},#&*!|>'\"%@` \n\t";
        text.insert(pick(text.size()), 1, chars[pick(chars.size())]);
        return text;
      }
      case 3: {  // replace a value after ": " with a nasty one
        std::vector<std::size_t> spots;
        for (std::size_t p = text.find(": "); p != std::string::npos; p = text.find(": ", p + 1)) {
          spots.push_back(p + 2);
        }
        if (spots.empty()) return text;
        const std::size_t at = spots[pick(spots.size())];
        std::size_t end = at;
        while (end < text.size() && text[end] != '\n' && text[end] != ',' && text[end] != '}')
          ++end;
        text.replace(at, end - at, kNastyValues[pick(kNastyValues.size())]);
        return text;
      }
      case 4: {  // replace a key with another known key
        std::vector<std::size_t> spots;
        for (std::size_t p = text.find(':'); p != std::string::npos; p = text.find(':', p + 1)) {
          spots.push_back(p);
        }
        if (spots.empty()) return text;
        const std::size_t colon = spots[pick(spots.size())];
        std::size_t begin = colon;
        while (begin > 0 && (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
                             text[begin - 1] == '_'))
          --begin;
        text.replace(begin, colon - begin, kKeys[pick(kKeys.size())]);
        return text;
      }
      case 5: {  // duplicate a line
        auto l = lines(text);
        if (l.empty()) return text;
        const std::size_t at = pick(l.size());
        l.insert(l.begin() + static_cast<std::ptrdiff_t>(at), l[at]);
        return join(l);
      }
      case 6: {  // delete a line
        auto l = lines(text);
        if (l.empty()) return text;
        l.erase(l.begin() + static_cast<std::ptrdiff_t>(pick(l.size())));
        return join(l);
      }
      case 7: {  // swap two lines
        auto l = lines(text);
        if (l.size() < 2) return text;
        std::swap(l[pick(l.size())], l[pick(l.size())]);
        return join(l);
      }
      case 8: {  // change a digit
        std::vector<std::size_t> digits;
        for (std::size_t p = 0; p < text.size(); ++p) {
          if (std::isdigit(static_cast<unsigned char>(text[p]))) digits.push_back(p);
        }
        if (digits.empty()) return text;
        text[digits[pick(digits.size())]] = static_cast<char>('0' + pick(10));
        return text;
      }
      default: {  // truncate, or nest deeply
        if (pick(2) == 0) return text.substr(0, pick(text.size()));
        const std::size_t depth = 1 + pick(2000);
        return text + "\nx: " + std::string(depth, '[') + std::string(depth, ']') + "\n";
      }
    }
  }

  std::mt19937_64 rng_;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.0;
  long iterations = -1;
  std::uint64_t seed = 1;
  std::string out = "scene_fuzz_finding.yaml";
  std::vector<std::string> corpus_files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fuzz_scene: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seconds") {
      seconds = std::atof(value().c_str());
    } else if (arg == "--iterations") {
      iterations = std::atol(value().c_str());
    } else if (arg == "--seed") {
      seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--out") {
      out = value();
    } else {
      corpus_files.push_back(arg);
    }
  }
  if (corpus_files.empty() || (seconds <= 0.0 && iterations < 0)) {
    std::fprintf(
        stderr,
        "usage: fuzz_scene (--seconds S | --iterations N) [--seed K] [--out FILE] SCENE...\n");
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> corpus;
  for (const std::string& file : corpus_files) corpus.emplace_back(file, readFile(file));

  Mutator mutator(seed);
  std::mt19937_64 choose(seed ^ 0x9e3779b97f4a7c15ull);
  const auto start = std::chrono::steady_clock::now();
  long run = 0, loaded = 0, rejected = 0;
  for (;; ++run) {
    if (iterations >= 0 && run >= iterations) break;
    if (seconds > 0.0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
      break;
    const auto& [file, text] =
        corpus[std::uniform_int_distribution<std::size_t>(0, corpus.size() - 1)(choose)];
    const std::string mutant = mutator.mutate(text);
    // Written before loading, so a crash or hang leaves the input behind.
    std::ofstream(out, std::ios::binary) << mutant;
    try {
      sim::engine::loadSceneFromString(mutant, file);
      ++loaded;
    } catch (const SceneInvalid& e) {
      if (e.errors().empty()) {
        std::fprintf(stderr, "finding: SceneInvalid without errors (input: %s)\n", out.c_str());
        return 1;
      }
      ++rejected;
    } catch (const SceneError& e) {
      if (e.file() != file && e.file().find(".yaml") == std::string::npos) {
        std::fprintf(stderr, "finding: error names no scene file: %s (input: %s)\n", e.what(),
                     out.c_str());
        return 1;
      }
      ++rejected;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "finding: unexpected %s (input: %s)\n", e.what(), out.c_str());
      return 1;
    }
  }
  std::remove(out.c_str());
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "fuzz_scene: %ld mutants in %.1f s (seed %llu): %ld loaded, %ld rejected with a "
      "located error, no finding\n",
      run, elapsed, static_cast<unsigned long long>(seed), loaded, rejected);
  return 0;
}
