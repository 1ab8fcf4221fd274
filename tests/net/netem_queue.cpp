// netem_queue: a misbehaving network in user space, for tests/net (this machine's kernel has no
// sch_netem). An iptables rule sends packets to NFQUEUE (CONFIG_NETFILTER_NETLINK_QUEUE); this
// program holds each one and gives its verdict: dropped with probability --loss, otherwise
// accepted after a delay uniform in --delay ± --jitter (so packets overtake each other:
// reordering), and everything dropped during a partition (--partition AT:FOR, or for
// --partition-for seconds from each SIGUSR1). Packets still held when a partition begins are
// dropped at their release: a cut link loses what is in flight.
//
// Decisions come from a seeded generator drawn twice per packet in arrival order, so the same
// seed and packet sequence give the same verdicts. Typical use, inside `unshare -rn`:
//   ip link set lo up
//   iptables -A OUTPUT -p udp -j NFQUEUE --queue-num 0
//   netem_queue --loss 0.2 --delay 0.1 --jitter 0.05 --seed 1 --partition-for 10
// Prints "netem_queue: ready" once bound, a line when a partition begins and heals, and its
// counts on SIGINT/SIGTERM. Exit code 77: the queue cannot be bound (no NFQUEUE here), 2: usage.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  unsigned queue = 0;
  double loss = 0.0;      // probability of dropping a packet
  double delay_s = 0.0;   // mean delay of an accepted packet
  double jitter_s = 0.0;  // the delay is uniform in delay ± jitter
  std::uint64_t seed = 1;
  double partition_at_s = -1.0;  // < 0: no scheduled partition
  double partition_for_s = 10.0;
};

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_partition_requests = 0;

void onStop(int) {
  g_stop = 1;
}
void onPartition(int) {
  g_partition_requests = g_partition_requests + 1;
}

struct Held {
  Clock::time_point release;
  std::uint64_t order;  // arrival order: ties released first come, first served
  std::uint32_t id;
  bool operator>(const Held& o) const {
    return release != o.release ? release > o.release : order > o.order;
  }
};

struct Counts {
  std::uint64_t packets = 0, lost = 0, cut = 0, accepted = 0, reordered = 0;
};

class Netem {
 public:
  explicit Netem(const Options& o) : o_(o), random_(o.seed), start_(Clock::now()) {
    if (o.partition_at_s >= 0.0) {
      schedulePartition(start_ + seconds(o.partition_at_s));
    }
  }

  // One queued packet: decide now, give the verdict now or at its release.
  void packet(nfq_q_handle* qh, std::uint32_t id) {
    ++counts_.packets;
    const double u_loss = uniform(), u_delay = uniform();  // both drawn: the sequence stays aligned
    const Clock::time_point now = Clock::now();
    if (partitioned(now)) {
      ++counts_.cut;
      nfq_set_verdict(qh, id, NF_DROP, 0, nullptr);
      return;
    }
    if (u_loss < o_.loss) {
      ++counts_.lost;
      nfq_set_verdict(qh, id, NF_DROP, 0, nullptr);
      return;
    }
    const double d = o_.delay_s + o_.jitter_s * (2.0 * u_delay - 1.0);
    if (d <= 0.0 && held_.empty()) {
      accept(qh, id, counts_.packets);
      return;
    }
    held_.push({now + seconds(d > 0.0 ? d : 0.0), counts_.packets, id});
  }

  // Releases every held packet that is due; returns the time to the next release (ms), capped.
  int release(nfq_q_handle* qh) {
    const Clock::time_point now = Clock::now();
    while (!held_.empty() && held_.top().release <= now) {
      const Held h = held_.top();
      held_.pop();
      if (partitioned(now)) {
        ++counts_.cut;
        nfq_set_verdict(qh, h.id, NF_DROP, 0, nullptr);
      } else {
        accept(qh, h.id, h.order);
      }
    }
    int wait_ms = 20;  // signals and partition edges are noticed within this
    if (!held_.empty()) {
      const auto next =
          std::chrono::duration_cast<std::chrono::milliseconds>(held_.top().release - now).count();
      wait_ms = static_cast<int>(std::max<long long>(0, std::min<long long>(wait_ms, next + 1)));
    }
    return wait_ms;
  }

  void tick() {
    while (g_partition_requests > handled_requests_) {
      ++handled_requests_;
      schedulePartition(Clock::now());
    }
    const Clock::time_point now = Clock::now();
    const bool cut = partitioned(now);
    if (cut != was_cut_) {
      std::printf("netem_queue: %s at %.3f s\n", cut ? "partition begins" : "partition heals",
                  std::chrono::duration<double>(now - start_).count());
      std::fflush(stdout);
      was_cut_ = cut;
    }
  }

  const Counts& counts() const { return counts_; }

 private:
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  double uniform() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }  // [0, 1)
  void schedulePartition(Clock::time_point from) {
    cut_from_ = from;
    cut_until_ = from + seconds(o_.partition_for_s);
  }
  bool partitioned(Clock::time_point t) const { return t >= cut_from_ && t < cut_until_; }
  void accept(nfq_q_handle* qh, std::uint32_t id, std::uint64_t order) {
    ++counts_.accepted;
    if (order < last_order_) ++counts_.reordered;  // overtaken by a later packet
    last_order_ = std::max(last_order_, order);
    nfq_set_verdict(qh, id, NF_ACCEPT, 0, nullptr);
  }

  Options o_;
  std::mt19937_64 random_;
  Clock::time_point start_;
  Clock::time_point cut_from_{Clock::time_point::max()}, cut_until_{Clock::time_point::max()};
  bool was_cut_ = false;
  std::sig_atomic_t handled_requests_ = 0;
  std::priority_queue<Held, std::vector<Held>, std::greater<Held>> held_;
  std::uint64_t last_order_ = 0;
  Counts counts_;
};

struct Context {
  Netem* netem = nullptr;
};

int onPacket(nfq_q_handle* qh, nfgenmsg*, nfq_data* data, void* user) {
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  if (header == nullptr) return 0;
  static_cast<Context*>(user)->netem->packet(qh, ntohl(header->packet_id));
  return 0;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "netem_queue: %s\nusage: netem_queue [--queue N] [--loss P] [--delay S] "
               "[--jitter S] [--seed N] [--partition AT:FOR] [--partition-for S]\n",
               why);
  std::exit(2);
}

double number(const char* name, const char* text, double lo, double hi) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= lo && v <= hi)) {
    usage((std::string(name) + ": expected a number in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "], got " + text)
              .c_str());
  }
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage((a + ": missing value").c_str());
    const char* v = argv[++i];
    if (a == "--queue") {
      o.queue = static_cast<unsigned>(number("--queue", v, 0, 65535));
    } else if (a == "--loss") {
      o.loss = number("--loss", v, 0.0, 1.0);
    } else if (a == "--delay") {
      o.delay_s = number("--delay", v, 0.0, 60.0);
    } else if (a == "--jitter") {
      o.jitter_s = number("--jitter", v, 0.0, 60.0);
    } else if (a == "--seed") {
      o.seed = static_cast<std::uint64_t>(number("--seed", v, 0, 1e15));
    } else if (a == "--partition-for") {
      o.partition_for_s = number("--partition-for", v, 0.0, 3600.0);
    } else if (a == "--partition") {
      const std::string s = v;
      const auto colon = s.find(':');
      if (colon == std::string::npos) usage("--partition: expected AT:FOR (seconds)");
      o.partition_at_s = number("--partition AT", s.substr(0, colon).c_str(), 0.0, 86400.0);
      o.partition_for_s = number("--partition FOR", s.substr(colon + 1).c_str(), 0.0, 3600.0);
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (o.jitter_s > o.delay_s) usage("--jitter must not exceed --delay (no negative delays)");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  struct sigaction stop {};
  stop.sa_handler = onStop;  // no SA_RESTART: poll returns at once
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);
  struct sigaction cut {};
  cut.sa_handler = onPartition;
  sigaction(SIGUSR1, &cut, nullptr);

  nfq_handle* h = nfq_open();
  if (h == nullptr) {
    std::fprintf(stderr, "netem_queue: cannot open a netfilter queue handle: %s\n",
                 std::strerror(errno));
    return 77;
  }
  Netem netem(options);
  Context context{&netem};
  nfq_q_handle* qh =
      nfq_create_queue(h, static_cast<std::uint16_t>(options.queue), &onPacket, &context);
  if (qh == nullptr) {
    std::fprintf(stderr, "netem_queue: cannot bind NFQUEUE %u: %s\n", options.queue,
                 std::strerror(errno));
    nfq_close(h);
    return 77;
  }
  // Metadata only (the id is all a verdict needs); room for every packet held at once.
  if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(qh, 16384) < 0) {
    std::fprintf(stderr, "netem_queue: cannot configure NFQUEUE %u: %s\n", options.queue,
                 std::strerror(errno));
    nfq_destroy_queue(qh);
    nfq_close(h);
    return 77;
  }
  nfnl_rcvbufsiz(nfq_nfnlh(h), 4 << 20);
  const int fd = nfq_fd(h);
  std::printf(
      "netem_queue: ready on queue %u: loss %g, delay %g s ± %g s, seed %llu, partition %g s%s\n",
      options.queue, options.loss, options.delay_s, options.jitter_s,
      static_cast<unsigned long long>(options.seed), options.partition_for_s,
      options.partition_at_s >= 0.0
          ? (" at " + std::to_string(options.partition_at_s) + " s").c_str()
          : " on SIGUSR1");
  std::fflush(stdout);

  std::vector<char> buffer(1 << 16);
  std::uint64_t overflows = 0;
  int wait_ms = 20;
  while (!g_stop) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    netem.tick();
    if (ready > 0) {
      // Everything waiting, without blocking.
      while (true) {
        const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (n < 0) {
          if (errno == ENOBUFS) {  // the kernel dropped queue messages: count, go on
            ++overflows;
            continue;
          }
          break;
        }
        nfq_handle_packet(h, buffer.data(), static_cast<int>(n));
      }
    }
    wait_ms = netem.release(qh);
  }
  const Counts& c = netem.counts();
  std::printf(
      "netem_queue: packets %llu, dropped %llu by loss and %llu by partition, accepted %llu "
      "(%llu reordered), queue overflows %llu\n",
      static_cast<unsigned long long>(c.packets), static_cast<unsigned long long>(c.lost),
      static_cast<unsigned long long>(c.cut), static_cast<unsigned long long>(c.accepted),
      static_cast<unsigned long long>(c.reordered), static_cast<unsigned long long>(overflows));
  std::fflush(stdout);
  nfq_destroy_queue(qh);
  nfq_close(h);
  return 0;
}
