// Model files through Assimp, treated as untrusted input. This header has no Assimp types: it
// returns plain data (doubles, metres, our z-up frame) that the scene loader, the collision hull
// builder and the renderer copy from.
//
// What importMesh() does, in order:
//   1. The file's extension must be one of acceptedMeshExtensions() (case-insensitive). Assimp
//      would otherwise sniff the content and try any of its ~40 importers.
//   2. The file must exist, be a regular file and be at most `max_file_bytes` long; checked
//      before Assimp reads a byte. Files that the model pulls in (a .gltf's .bin buffers, an
//      .obj's .mtl) count against the same budget and must lie in the model's directory or
//      below it.
//   3. Assimp reads it with post-processing: ValidateDataStructure, Triangulate,
//      JoinIdenticalVertices, GenSmoothNormals (only where the file has no normals), SortByPType
//      with points and lines removed. A scene flagged incomplete or without any triangle is
//      rejected. By default this and the steps below run in a forked child process with memory
//      and time limits (MeshImportOptions::isolate), whose result is copied back: Assimp 5.2.5
//      can be made to allocate without bound by a one-letter change in a .dae file.
//   4. The numbers are taken as stored in the file, whatever axes or units it declares (FBX's
//      UpAxis and UnitScaleFactor and COLLADA's <up_axis> are ignored; a .3ds comes back z-up as
//      3ds Max stores it): `scale` and `up` are the conversions, stated by the caller. The one
//      exception: Assimp 5.2 always applies COLLADA's <unit meter="..."> (a file declaring
//      millimetres arrives in metres), and `scale` multiplies on top of it.
//   5. The node tree is walked from the root (or from the node named by `node`): every mesh
//      instance becomes one ImportedMesh with its node transforms applied, then the frame
//      conversion (scale, up axis).
//
// Every failure throws MeshImportError whose what() starts with the file's path and says what
// was wrong, e.g.
//   assets/x.ply: unsupported model format ".ply" (accepted: .gltf .glb .obj .3ds .fbx .dae .stl)
//   assets/big.glb: file is 70000000 bytes, more than the limit of 67108864
//   assets/broken.glb: Assimp could not read it: GLTF: ... (Assimp's own message)
//   assets/bomb.dae: Assimp could not read it: std::bad_alloc      (hit the memory limit)
//   assets/hang.fbx: the reader took longer than 60.000000 s and was stopped
// Nothing else escapes: Assimp's errors, running out of memory, hangs and crashes inside Assimp
// are caught and converted (the last three only with `isolate`, the default).
//
// Threads: the isolated read forks the calling process. The child runs only the read (Assimp and
// the C++ heap, which glibc keeps usable after fork) and leaves with _exit(): no locks or exit
// handlers of the caller's other threads are used there.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sim::engine {

/// A model file could not be imported. what() is "<path>: <what was wrong>".
class MeshImportError : public std::runtime_error {
 public:
  MeshImportError(std::string path, std::string message);
  const std::string& path() const { return path_; }
  /// What was wrong, without the path.
  const std::string& message() const { return message_; }

 private:
  std::string path_;
  std::string message_;
};

/// Which axis of the file points up. Ours is +z; a y-up file (glTF by its specification, most
/// OBJ and FBX exports) is rotated +90° about x so that its +y becomes our +z and its +z our -y.
enum class UpAxis { Z, Y };

/// How to read a model file. Defaults: metres, z-up, the whole file, 64 MiB.
struct MeshImportOptions {
  /// Uniform factor from file units to metres (0.001 for a file in millimetres); finite, > 0.
  double scale = 1.0;
  /// The file's up axis; see UpAxis.
  UpAxis up = UpAxis::Z;
  /// When not empty: import only the subtree of the first node with exactly this name (depth
  /// first), with vertices in that node's frame; see ImportedModel::frame.
  std::string node;
  /// Largest accepted size of the file plus everything it references, bytes.
  std::uint64_t max_file_bytes = 64ull << 20;
  /// Read the file in a forked child process, limited to `max_memory_bytes` of address space
  /// beyond the caller's and to `max_seconds`: a file that makes Assimp exhaust memory, loop or
  /// crash ends in a MeshImportError instead of taking the simulator down. Off: read in this
  /// process, without those two limits.
  bool isolate = true;
  std::uint64_t max_memory_bytes = 2ull << 30;
  double max_seconds = 60.0;
};

using Vec3d = std::array<double, 3>;

/// Surface appearance of one mesh.
struct MeshMaterial {
  /// Diffuse (glTF: base) colour, linear RGBA in [0, 1]; alpha includes the material's opacity.
  std::array<double, 4> diffuse{0.8, 0.8, 0.8, 1.0};
  /// Diffuse or base-colour texture: a file path resolved against the model's directory, or
  /// "*N" for the N-th texture embedded in the file; empty when there is none.
  std::string texture;
};

/// One mesh instance: a mesh placed by one node. Triangles only.
struct ImportedMesh {
  std::string name;             ///< The mesh's name in the file, or "<node>#<k>" when it has none.
  std::string node;             ///< Name of the node that places it.
  std::vector<Vec3d> vertices;  ///< m, in ImportedModel's frame.
  std::vector<Vec3d> normals;   ///< Unit vectors, parallel to `vertices`.
  std::vector<std::array<std::uint32_t, 3>> triangles;  ///< Counter-clockwise seen from outside.
  /// Texture coordinates (u, v) of the first UV channel, parallel to `vertices`; empty when the
  /// mesh has none. v = 0 is the bottom row of the image (OpenGL's convention, as Assimp gives).
  std::vector<std::array<double, 2>> uvs;
  MeshMaterial material;
};

/// A texture stored inside the model file (glTF .glb, FBX): still encoded, as in the file.
struct EmbeddedTexture {
  std::string format;  ///< File extension of the encoding without the dot ("png", "jpg").
  std::string bytes;   ///< The encoded image.
};

/// Axis-aligned bounding box, m. Empty (min > max) when it holds no point.
struct Aabb {
  Vec3d min{1e300, 1e300, 1e300};
  Vec3d max{-1e300, -1e300, -1e300};
  bool empty() const { return min[0] > max[0]; }
  Vec3d size() const { return {max[0] - min[0], max[1] - min[1], max[2] - min[2]}; }
  void add(const Vec3d& p);
};

/// A rigid pose: position (m) and unit quaternion [w, x, y, z], as in scene files.
struct Pose {
  Vec3d position{0.0, 0.0, 0.0};
  std::array<double, 4> rotation{1.0, 0.0, 0.0, 0.0};
};

/// Everything imported from one file (or one node's subtree of it).
struct ImportedModel {
  std::string path;
  std::vector<ImportedMesh> meshes;
  /// With a node filter: the rigid part of the node's transform in the model frame (z-up,
  /// scaled), i.e. where the link frame sits in the file's rest pose; the meshes' vertices are
  /// expressed in this frame. A scale inside the node's transform stays in the vertices. Without a
  /// filter: identity, and the vertices are in the model frame.
  Pose frame;
  /// The embedded textures that MeshMaterial::texture "*N" refers to, by N. Only compressed
  /// (PNG, JPEG) ones are kept; a raw-texel one is left empty and the mesh drawn untextured.
  std::vector<EmbeddedTexture> embedded_textures;

  std::size_t vertexCount() const;
  std::size_t triangleCount() const;
  /// Every vertex of every mesh, in order (input for a convex hull).
  std::vector<Vec3d> allVertices() const;
  Aabb bounds() const;
};

/// The accepted extensions, lower case with the dot: .gltf .glb .obj .3ds .fbx .dae .stl (STL,
/// binary or ASCII, the usual format of URDF meshes).
const std::vector<std::string_view>& acceptedMeshExtensions();

/// Loads `path` as described at the top of this file; throws MeshImportError.
ImportedModel importMesh(const std::string& path, const MeshImportOptions& options = {});

/// Names of all nodes in the file, depth first from the root (for messages and tools). Same
/// checks as importMesh(); throws MeshImportError.
std::vector<std::string> meshNodeNames(const std::string& path,
                                       const MeshImportOptions& options = {});

}  // namespace sim::engine
