// Convex hulls from point clouds: quickhull on triangles, then coplanar triangles merged into
// polygon faces (a box's hull has 6 quads, which the face-clipping narrow phase needs for a stable
// four-point resting manifold).
//
// Robustness: distances are compared against a tolerance relative to the cloud's extent. Points
// within it of the current hull count as inside (duplicates, points on faces and edges), the eye
// point of each step is the farthest outside point (an extreme point, so its visible region is
// well defined), and each final face plane is pushed out to the farthest hull vertex, so every
// input point lies inside every plane up to the tolerance.
#include <dynamics/shapes.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>

namespace sim::dynamics {

namespace {

// Relative tolerances (times the cloud's extent): a point closer than kOutsideTol to a face
// counts as on it; triangles whose corners lie within kMergeTol of a seed plane form one face.
// kMergeTol is loose enough for coordinates rounded to float precision (a box exported from a
// modelling tool still gets quad faces).
constexpr double kOutsideTol = 1e-11;
constexpr double kMergeTol = 1e-6;

struct Triangle {
  std::array<int, 3> v{};
  std::array<int, 3> adj{-1, -1, -1};  // face across edge v[k] -> v[k+1]
  Vec3 n = Vec3::Zero();
  double d = 0.0;
  std::vector<int> outside;
  bool dead = false;

  double distance(const Vec3& p) const { return n.dot(p) - d; }
};

class QuickHull {
 public:
  QuickHull(const std::vector<Vec3>& points, double eps) : p_(points), eps_(eps) {}

  bool build(std::string& error);
  std::vector<Triangle> faces() const {
    std::vector<Triangle> live;
    for (const Triangle& t : faces_)
      if (!t.dead) live.push_back(t);
    return live;
  }
  // Adjacency indices refer to faces_; remap for the live list.
  std::vector<int> liveIndex() const {
    std::vector<int> map(faces_.size(), -1);
    int k = 0;
    for (std::size_t i = 0; i < faces_.size(); ++i)
      if (!faces_[i].dead) map[i] = k++;
    return map;
  }

 private:
  int addFace(int a, int b, int c);
  bool initialSimplex(std::string& error);
  void assign(const std::vector<int>& candidates, const std::vector<int>& targets);
  void addPoint(int face, int eye);

  const std::vector<Vec3>& p_;
  double eps_;
  std::vector<Triangle> faces_;
};

int QuickHull::addFace(int a, int b, int c) {
  Triangle t;
  t.v = {a, b, c};
  const Vec3 n = (p_[b] - p_[a]).cross(p_[c] - p_[a]);
  const double len = n.norm();
  t.n = len > 0.0 ? Vec3(n / len) : Vec3::Zero();
  t.d = t.n.dot(p_[a]);
  faces_.push_back(std::move(t));
  return static_cast<int>(faces_.size()) - 1;
}

bool QuickHull::initialSimplex(std::string& error) {
  const int n = static_cast<int>(p_.size());
  // Two far-apart points, the farthest from their line, the farthest from their plane.
  int i0 = 0;
  for (int i = 1; i < n; ++i)
    if (p_[i].x() < p_[i0].x()) i0 = i;
  int i1 = i0;
  for (int i = 0; i < n; ++i)
    if ((p_[i] - p_[i0]).squaredNorm() > (p_[i1] - p_[i0]).squaredNorm()) i1 = i;
  if ((p_[i1] - p_[i0]).norm() <= eps_) {
    error = "all points coincide";
    return false;
  }
  const Vec3 axis = (p_[i1] - p_[i0]).normalized();
  auto lineDist = [&](int i) { return (p_[i] - p_[i0]).cross(axis).norm(); };
  int i2 = i0;
  for (int i = 0; i < n; ++i)
    if (lineDist(i) > lineDist(i2)) i2 = i;
  if (lineDist(i2) <= eps_) {
    error = "all points lie on one line";
    return false;
  }
  const Vec3 normal = (p_[i1] - p_[i0]).cross(p_[i2] - p_[i0]).normalized();
  auto planeDist = [&](int i) { return normal.dot(p_[i] - p_[i0]); };
  int i3 = i0;
  for (int i = 0; i < n; ++i)
    if (std::abs(planeDist(i)) > std::abs(planeDist(i3))) i3 = i;
  if (std::abs(planeDist(i3)) <= eps_) {
    error = "all points lie in one plane (a hull needs 4 points that span a volume)";
    return false;
  }
  // Orient the tetrahedron so every face's normal points away from the fourth corner.
  if (planeDist(i3) > 0.0) std::swap(i1, i2);
  addFace(i0, i1, i2);
  addFace(i0, i3, i1);
  addFace(i1, i3, i2);
  addFace(i2, i3, i0);
  // Adjacency by matching directed edges.
  for (int f = 0; f < 4; ++f) {
    for (int k = 0; k < 3; ++k) {
      const int a = faces_[f].v[k], b = faces_[f].v[(k + 1) % 3];
      for (int g = 0; g < 4; ++g) {
        if (g == f) continue;
        for (int m = 0; m < 3; ++m)
          if (faces_[g].v[m] == b && faces_[g].v[(m + 1) % 3] == a) faces_[f].adj[k] = g;
      }
    }
  }
  std::vector<int> rest;
  for (int i = 0; i < n; ++i)
    if (i != i0 && i != i1 && i != i2 && i != i3) rest.push_back(i);
  assign(rest, {0, 1, 2, 3});
  return true;
}

// Each candidate goes to the outside set of the target face it is farthest above (or nowhere).
void QuickHull::assign(const std::vector<int>& candidates, const std::vector<int>& targets) {
  for (int i : candidates) {
    int best = -1;
    double best_d = eps_;
    for (int f : targets) {
      const double d = faces_[f].distance(p_[i]);
      if (d > best_d) {
        best_d = d;
        best = f;
      }
    }
    if (best >= 0) faces_[best].outside.push_back(i);
  }
}

void QuickHull::addPoint(int face, int eye) {
  const Vec3& e = p_[eye];
  // Visible faces: connected to the seed face, eye strictly above.
  std::vector<int> visible{face};
  faces_[face].dead = true;
  for (std::size_t k = 0; k < visible.size(); ++k) {
    for (int nb : faces_[visible[k]].adj) {
      if (nb < 0 || faces_[nb].dead) continue;
      if (faces_[nb].distance(e) > eps_) {
        faces_[nb].dead = true;
        visible.push_back(nb);
      }
    }
  }
  // Horizon: edges of visible faces whose neighbour stays.
  struct HorizonEdge {
    int a, b, outer;
  };
  std::vector<HorizonEdge> horizon;
  for (int f : visible) {
    for (int k = 0; k < 3; ++k) {
      const int nb = faces_[f].adj[k];
      if (!faces_[nb].dead) horizon.push_back({faces_[f].v[k], faces_[f].v[(k + 1) % 3], nb});
    }
  }
  // The horizon must be one loop; otherwise (a numerically non-disk visible region) skip the
  // point, restoring the faces.
  std::map<int, int> next;
  for (std::size_t k = 0; k < horizon.size(); ++k) next[horizon[k].a] = static_cast<int>(k);
  bool loop = next.size() == horizon.size();
  if (loop) {
    std::size_t steps = 0;
    int at = 0;
    do {
      auto it = next.find(horizon[at].b);
      if (it == next.end()) {
        loop = false;
        break;
      }
      at = it->second;
      ++steps;
    } while (at != 0 && steps <= horizon.size());
    loop = loop && steps == horizon.size();
  }
  std::vector<int> orphans;
  for (int f : visible) {
    orphans.insert(orphans.end(), faces_[f].outside.begin(), faces_[f].outside.end());
    faces_[f].outside.clear();
  }
  orphans.erase(std::remove(orphans.begin(), orphans.end(), eye), orphans.end());
  if (!loop) {
    for (int f : visible) faces_[f].dead = false;
    faces_[face].outside = orphans;
    return;
  }
  // New faces fan from the eye over the horizon; stitch them to the outer faces and each other.
  std::map<int, int> face_from;  // horizon start vertex -> new face
  std::vector<int> created;
  for (const HorizonEdge& h : horizon) {
    const int f = addFace(h.a, h.b, eye);
    faces_[f].adj[0] = h.outer;
    for (int m = 0; m < 3; ++m) {
      Triangle& outer = faces_[h.outer];
      if (outer.v[m] == h.b && outer.v[(m + 1) % 3] == h.a) outer.adj[m] = f;
    }
    face_from[h.a] = f;
    created.push_back(f);
  }
  for (int f : created) {
    Triangle& t = faces_[f];
    t.adj[1] = face_from.at(t.v[1]);  // edge b -> eye: the face starting at b
    for (int g : created)
      if (faces_[g].v[1] == t.v[0]) t.adj[2] = g;  // edge eye -> a: the face ending at a
  }
  assign(orphans, created);
}

bool QuickHull::build(std::string& error) {
  if (!initialSimplex(error)) return false;
  // Repeatedly lift the farthest outside point of the first face that has one.
  for (std::size_t f = 0; f < faces_.size(); ++f) {
    while (!faces_[f].dead && !faces_[f].outside.empty()) {
      const std::vector<int>& out = faces_[f].outside;
      int eye = out.front();
      for (int i : out)
        if (faces_[f].distance(p_[i]) > faces_[f].distance(p_[eye])) eye = i;
      addPoint(static_cast<int>(f), eye);
    }
  }
  return true;
}

// Groups adjacent triangles whose corners lie within `tol` of a seed triangle's plane (largest
// seeds first) and returns each group's boundary loop (counter-clockwise from outside), or an
// empty list when a group's boundary is not a single loop.
std::vector<std::vector<int>> mergeCoplanar(const std::vector<Triangle>& tris,
                                            const std::vector<int>& live,
                                            const std::vector<Vec3>& p, double tol) {
  const int n = static_cast<int>(tris.size());
  std::vector<double> area(tris.size());
  for (int i = 0; i < n; ++i)
    area[i] = (p[tris[i].v[1]] - p[tris[i].v[0]]).cross(p[tris[i].v[2]] - p[tris[i].v[0]]).norm();
  std::vector<int> seeds(tris.size());
  std::iota(seeds.begin(), seeds.end(), 0);
  std::stable_sort(seeds.begin(), seeds.end(), [&](int x, int y) { return area[x] > area[y]; });
  std::vector<int> group(tris.size(), -1);
  std::vector<std::vector<int>> loops;
  for (int seed : seeds) {
    if (group[seed] >= 0) continue;
    const int g = static_cast<int>(loops.size());
    std::vector<int> members{seed};
    group[seed] = g;
    const Triangle& s = tris[seed];
    for (std::size_t k = 0; k < members.size(); ++k) {
      for (int raw : tris[members[k]].adj) {
        const int nb = live[raw];
        if (nb < 0 || group[nb] >= 0 || tris[nb].n.dot(s.n) <= 0.0) continue;
        bool flat = true;
        for (int v : tris[nb].v) flat = flat && std::abs(s.distance(p[v])) <= tol;
        if (!flat) continue;
        group[nb] = g;
        members.push_back(nb);
      }
    }
    // Boundary: directed edges whose neighbour is in another group, chained into a loop.
    std::map<int, int> next;
    bool simple = true;
    for (int m : members) {
      for (int k = 0; k < 3; ++k) {
        if (group[live[tris[m].adj[k]]] == g) continue;
        simple = simple && next.emplace(tris[m].v[k], tris[m].v[(k + 1) % 3]).second;
      }
    }
    std::vector<int> loop;
    if (simple && !next.empty()) {
      const int start = next.begin()->first;
      int at = start;
      do {
        loop.push_back(at);
        const auto it = next.find(at);
        at = it == next.end() ? -1 : it->second;
      } while (at >= 0 && at != start && loop.size() <= next.size());
      simple = loop.size() == next.size() && at == start;
    }
    if (!simple) return {};
    loops.push_back(std::move(loop));
  }
  return loops;
}

}  // namespace

std::shared_ptr<const ConvexHullData> makeConvexHull(const std::vector<Vec3>& points,
                                                     std::string* error) {
  auto fail = [error](const std::string& message) {
    if (error) *error = message;
    return std::shared_ptr<const ConvexHullData>();
  };
  if (points.size() < 4)
    return fail("a convex hull needs at least 4 points, got " + std::to_string(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!points[i].allFinite()) return fail("point " + std::to_string(i) + " is not finite");
  Vec3 lo = points[0], hi = points[0];
  for (const Vec3& q : points) {
    lo = lo.cwiseMin(q);
    hi = hi.cwiseMax(q);
  }
  const double scale = (hi - lo).norm() + lo.cwiseAbs().cwiseMax(hi.cwiseAbs()).maxCoeff();
  QuickHull qh(points, kOutsideTol * scale);
  std::string why;
  if (!qh.build(why)) return fail("degenerate point cloud: " + why);
  const std::vector<Triangle> tris = qh.faces();
  const std::vector<int> live = qh.liveIndex();
  std::vector<std::vector<int>> loops = mergeCoplanar(tris, live, points, kMergeTol * scale);
  if (loops.empty()) {  // could not merge cleanly: keep the triangles
    for (const Triangle& t : tris) loops.push_back({t.v[0], t.v[1], t.v[2]});
  }
  // A vertex on only two faces lies inside an edge between merged faces: drop it (but keep it
  // for the plane offsets below, so it stays inside the hull's planes).
  std::vector<int> corners;
  for (const Triangle& t : tris) corners.insert(corners.end(), t.v.begin(), t.v.end());
  std::map<int, int> valence;
  for (const auto& loop : loops)
    for (int v : loop) ++valence[v];
  for (auto& loop : loops)
    loop.erase(std::remove_if(loop.begin(), loop.end(), [&](int v) { return valence[v] < 3; }),
               loop.end());
  // Renumber the used points in input order.
  std::map<int, int> index;
  for (const auto& [v, count] : valence)
    if (count >= 3) index.emplace(v, static_cast<int>(index.size()));
  auto hull = std::make_shared<ConvexHullData>();
  for (const auto& [v, k] : index) hull->vertices.push_back(points[v]);
  std::map<std::pair<int, int>, int> edge_of;
  for (const auto& loop : loops) {
    if (loop.size() < 3) return fail("internal error: a merged face lost its corners");
    ConvexHullData::Face face;
    face.first = static_cast<int>(hull->face_vertices.size());
    face.count = static_cast<int>(loop.size());
    // Area-weighted normal of the polygon's fan: robust for slightly non-planar polygons.
    Vec3 n = Vec3::Zero();
    const Vec3& origin = points[loop[0]];
    for (std::size_t k = 1; k + 1 < loop.size(); ++k)
      n += (points[loop[k]] - origin).cross(points[loop[k + 1]] - origin);
    face.normal = n.normalized();
    const int f = static_cast<int>(hull->faces.size());
    for (std::size_t k = 0; k < loop.size(); ++k) {
      const int a = index.at(loop[k]), b = index.at(loop[(k + 1) % loop.size()]);
      hull->face_vertices.push_back(a);
      const auto key = std::minmax(a, b);
      auto [it, fresh] =
          edge_of.emplace(std::pair{key.first, key.second}, static_cast<int>(hull->edges.size()));
      if (fresh)
        hull->edges.push_back({a, b, f, -1});
      else
        hull->edges[it->second].face_right = f;
    }
    hull->faces.push_back(face);
  }
  for (const auto& e : hull->edges)
    if (e.face_right < 0) return fail("internal error: the hull is not closed");
  // Each plane through its farthest vertex: every point inside or on every face plane.
  for (ConvexHullData::Face& face : hull->faces) {
    face.offset = -std::numeric_limits<double>::infinity();
    for (int v : corners) face.offset = std::max(face.offset, face.normal.dot(points[v]));
  }
  hull->aabb_min = hull->aabb_max = hull->vertices.front();
  for (const Vec3& v : hull->vertices) {
    hull->centroid += v;
    hull->aabb_min = hull->aabb_min.cwiseMin(v);
    hull->aabb_max = hull->aabb_max.cwiseMax(v);
  }
  hull->centroid /= static_cast<double>(hull->vertices.size());
  return hull;
}

}  // namespace sim::dynamics
