// The DDS side of engine/remote.h: one participant per process, UDPv4 only, the class's partition
// on every publisher and subscriber, and conversions between the generated topic types and the
// engine's plain structs. Nothing else in the project includes Fast DDS. In a secured class
// (ClassAddress::security) the participant loads DDS Security's builtin plugins with the files of
// engine/class_security.h.
#include <engine/class_security.h>
#include <engine/remote.h>

#include "simtrainer.h"
#include "simtrainerPubSubTypes.h"

#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/DomainParticipantListener.hpp>
#include <fastdds/dds/log/Log.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <concepts>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace sim::engine::remote {

namespace dds = eprosima::fastdds::dds;
namespace gen = simtrainer::net;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;

std::int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace {

// How a topic is delivered.
enum class Delivery {
  Newest,    // best effort, keep last 1, volatile: state
  Reliable,  // reliable, keep last `depth`, volatile: pult, commands, events
  Latched,   // reliable, keep last 1, transient local (late joiners get it): identity
  Reported,  // reliable, keep last `depth`, transient local: station status (an instructor that
             // joins late sees every station at once)
};

dds::DataWriterQos writerQos(dds::Publisher* publisher, Delivery delivery, int depth) {
  dds::DataWriterQos q = publisher->get_default_datawriter_qos();
  q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
  q.history().depth = delivery == Delivery::Reliable || delivery == Delivery::Reported ? depth : 1;
  q.reliability().kind = delivery == Delivery::Newest ? dds::BEST_EFFORT_RELIABILITY_QOS
                                                      : dds::RELIABLE_RELIABILITY_QOS;
  // Keep-last never waits for acknowledgements, but bound the wait anyway: a write must never
  // hold the server's frame up.
  q.reliability().max_blocking_time = eprosima::fastrtps::Duration_t(0, 5'000'000);
  // A lost sample or acknowledgement is repaired at the writer's next heartbeat: every 0.25 s,
  // not Fast DDS's default 3 s (at 20 % loss an instructor's command was confirmed only seconds
  // after it had been applied; tests/net, the misbehaving-network test).
  if (delivery == Delivery::Reliable)
    q.reliable_writer_qos().times.heartbeatPeriod = eprosima::fastrtps::Duration_t(0, 250'000'000);
  q.durability().kind = delivery == Delivery::Latched || delivery == Delivery::Reported
                            ? dds::TRANSIENT_LOCAL_DURABILITY_QOS
                            : dds::VOLATILE_DURABILITY_QOS;
  // No shared-memory data sharing: UDP only (the shared-memory segments outlived killed
  // processes and confused later runs).
  q.data_sharing().off();
  q.endpoint().history_memory_policy =
      eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  // Synchronous publication (the default): the frame's thread sends to every station. The
  // asynchronous mode measured worse here (bench_net: 1.1-1.5 ms mean, 11 ms p99 per write with
  // one station, against 0.27 ms and 4.6 ms synchronous).
  return q;
}

dds::DataReaderQos readerQos(dds::Subscriber* subscriber, Delivery delivery, int depth) {
  dds::DataReaderQos q = subscriber->get_default_datareader_qos();
  q.history().kind = dds::KEEP_LAST_HISTORY_QOS;
  q.history().depth = delivery == Delivery::Reliable || delivery == Delivery::Reported ? depth : 1;
  q.reliability().kind = delivery == Delivery::Newest ? dds::BEST_EFFORT_RELIABILITY_QOS
                                                      : dds::RELIABLE_RELIABILITY_QOS;
  q.durability().kind = delivery == Delivery::Latched || delivery == Delivery::Reported
                            ? dds::TRANSIENT_LOCAL_DURABILITY_QOS
                            : dds::VOLATILE_DURABILITY_QOS;
  q.data_sharing().off();
  q.endpoint().history_memory_policy =
      eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
  return q;
}

struct Endpoint {
  dds::Topic* topic = nullptr;
  dds::DataWriter* writer = nullptr;
  dds::DataReader* reader = nullptr;
};

// Each topic's mapping, declared once: fields(plain, wire, f) calls f(plain member, wire member)
// for every field of the topic, in IDL order. `plain` is const when publishing and mutable when
// taking, so the one list serves both directions (toWire and fromWire below).
template <class P, class T>
concept PlainOf = std::same_as<std::remove_const_t<P>, T>;

template <PlainOf<SceneIdentity> P, class F>
void fields(P& p, gen::SceneIdentity& w, F&& f) {
  f(p.run_id, w.run_id());
  f(p.scene_name, w.scene_name());
  f(p.scene_file, w.scene_file());
  f(p.scene_hash, w.scene_hash());
  f(p.body_count, w.body_count());
  f(p.motor_count, w.motor_count());
  f(p.controls, w.controls());
  f(p.frame_rate_hz, w.frame_rate_hz());
  f(p.time_step_s, w.time_step_s());
}

template <PlainOf<StateFrame> P, class F>
void fields(P& p, gen::StateFrame& w, F&& f) {
  f(p.run_id, w.run_id());
  f(p.frame, w.frame());
  f(p.step, w.step());
  f(p.sim_time_s, w.sim_time_s());
  f(p.paused, w.paused());
  f(p.poses, w.poses());
  f(p.motor_angle_rad, w.motor_angle_rad());
  f(p.motor_speed_radps, w.motor_speed_radps());
  f(p.motor_voltage, w.motor_voltage());
  f(p.pult, w.pult());
  f(p.state_hash, w.state_hash());
  f(p.sent_ns, w.sent_ns());
  f(p.scored, w.scored());
  f(p.score, w.score());
}

template <PlainOf<PultInput> P, class F>
void fields(P& p, gen::PultInput& w, F&& f) {
  f(p.station, w.station());
  f(p.seq, w.seq());
  f(p.values, w.values());
}

template <PlainOf<StationStatus> P, class F>
void fields(P& p, gen::StationStatus& w, F&& f) {
  f(p.station, w.station());
  f(p.role, w.role());
  f(p.last_step, w.last_step());
  f(p.frames_received, w.frames_received());
  f(p.dropped, w.dropped());
  f(p.link_ok, w.link_ok());
  f(p.has_pult, w.has_pult());
  f(p.scored, w.scored());
  f(p.score, w.score());
}

template <PlainOf<Command> P, class F>
void fields(P& p, gen::Command& w, F&& f) {
  f(p.issuer, w.issuer());
  f(p.seq, w.seq());
  f(p.kind, w.kind());  // taken: any number; the server checks it before use
  f(p.target, w.target());
  f(p.fault, w.fault());
  f(p.value, w.value());
}

template <PlainOf<Event> P, class F>
void fields(P& p, gen::Event& w, F&& f) {
  f(p.run_id, w.run_id());
  f(p.step, w.step());
  f(p.sim_time_s, w.sim_time_s());
  f(p.kind, w.kind());
  f(p.text, w.text());  // published cut to 1000 characters (publishEvent)
}

// One field, plain -> wire and wire -> plain: the same type is copied (numbers, sequences of
// numbers, reusing the wire sample's capacity); strings become bounded strings and back.
template <class T>
void put(T& w, const T& p) {
  w = p;
}
template <std::size_t N>
void put(eprosima::fastrtps::fixed_string<N>& w, const std::string& p) {
  w = p;
}
template <std::size_t N>
void put(std::vector<eprosima::fastrtps::fixed_string<N>>& w, const std::vector<std::string>& p) {
  w.assign(p.begin(), p.end());
}
void put(std::int32_t& w, CommandKind p) {
  w = static_cast<std::int32_t>(p);
}

template <class T>
void get(T& p, const T& w) {
  p = w;
}
template <std::size_t N>
void get(std::string& p, const eprosima::fastrtps::fixed_string<N>& w) {
  p = w.to_string();
}
template <std::size_t N>
void get(std::vector<std::string>& p, const std::vector<eprosima::fastrtps::fixed_string<N>>& w) {
  p.clear();
  for (const auto& s : w) p.push_back(s.to_string());
}
void get(CommandKind& p, std::int32_t w) {
  p = static_cast<CommandKind>(w);
}

template <class Plain, class Wire>
Wire& toWire(const Plain& in, Wire& out) {
  fields(in, out, [](const auto& p, auto& w) { put(w, p); });
  return out;
}

template <class Wire, class Plain>
void fromWire(Wire& in, Plain& out) {
  fields(out, in, [](auto& p, const auto& w) { get(p, w); });
}

// Takes the next valid sample (skipping disposals and other notices) into `out`; `writer`, when
// given, gets the GUID of the DataWriter that wrote it.
template <class Wire, class Plain>
bool takeNext(dds::DataReader* reader, Wire& sample, Plain& out,
              eprosima::fastrtps::rtps::GUID_t* writer = nullptr) {
  if (reader == nullptr) return false;
  dds::SampleInfo info;
  while (reader->take_next_sample(&sample, &info) == ReturnCode_t::RETCODE_OK) {
    if (!info.valid_data) continue;
    fromWire(sample, out);
    if (writer) eprosima::fastrtps::rtps::iHandle2GUID(*writer, info.publication_handle);
    return true;
  }
  return false;
}

std::string text(const eprosima::fastrtps::rtps::GUID_t& guid) {
  std::ostringstream s;
  s << guid;
  return s.str();
}

// What discovery tells about the other participants: the partitions of every remote DataWriter
// (in a secured class the access control has checked them against the writer's permissions
// before its samples are accepted) and the participants that failed authentication. Called on
// Fast DDS's threads.
class Discovery : public dds::DomainParticipantListener {
 public:
  void on_publisher_discovery(dds::DomainParticipant*,
                              eprosima::fastrtps::rtps::WriterDiscoveryInfo&& info) override {
    using Status = eprosima::fastrtps::rtps::WriterDiscoveryInfo::DISCOVERY_STATUS;
    std::lock_guard lock(mutex_);
    if (info.status == Status::REMOVED_WRITER) {
      partitions_.erase(info.info.guid());
    } else {
      partitions_[info.info.guid()] = info.info.m_qos.m_partition.getNames();
    }
  }
  void onParticipantAuthentication(
      dds::DomainParticipant*,
      eprosima::fastrtps::rtps::ParticipantAuthenticationInfo&& info) override {
    if (info.status ==
        eprosima::fastrtps::rtps::ParticipantAuthenticationInfo::UNAUTHORIZED_PARTICIPANT) {
      // Fast DDS tries again every second: each participant is counted and logged once.
      std::lock_guard lock(mutex_);
      if (refused_.insert(info.guid.guidPrefix).second) {
        spdlog::warn("DDS Security: participant {} failed authentication: ignored",
                     text(info.guid));
      }
    }
  }
  /// The name after `prefix` when the writer has exactly one partition and it starts with
  /// `prefix`; empty otherwise (unknown writer, no or several partitions).
  std::string nameAfter(const eprosima::fastrtps::rtps::GUID_t& writer,
                        const std::string& prefix) const {
    std::lock_guard lock(mutex_);
    auto it = partitions_.find(writer);
    if (it == partitions_.end() || it->second.size() != 1) return "";
    const std::string& p = it->second.front();
    return p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0
               ? p.substr(prefix.size())
               : "";
  }
  std::uint64_t refused() const {
    std::lock_guard lock(mutex_);
    return refused_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<eprosima::fastrtps::rtps::GUID_t, std::vector<std::string>> partitions_;
  std::set<eprosima::fastrtps::rtps::GuidPrefix_t> refused_;
};

// Remote DataWriters the access control refused (their permissions do not allow the topic or
// partition). Fast DDS 2.9 tells no listener, only its log (category RTPS_EDP, on its logging
// thread): the message is counted here, in the whole process, and Fast DDS still prints it.
std::atomic<std::uint64_t> g_writers_refused{0};

class RefusedWriters : public eprosima::fastdds::dds::LogConsumer {
 public:
  void Consume(const eprosima::fastdds::dds::Log::Entry& entry) override {
    if (entry.message.rfind("Security manager returns an error for writer", 0) == 0)
      ++g_writers_refused;
  }
};

void countRefusedWriters() {
  static std::once_flag once;
  std::call_once(once, [] {
    eprosima::fastdds::dds::Log::RegisterConsumer(std::make_unique<RefusedWriters>());
  });
}

// DDS Security's builtin plugins with the participant's files.
void secure(dds::DomainParticipantQos& qos, const security::Credentials& c) {
  auto& p = qos.properties().properties();
  auto file = [](const std::string& path) { return "file://" + path; };
  p.emplace_back("dds.sec.auth.plugin", "builtin.PKI-DH");
  p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_ca", file(c.ca));
  p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_certificate", file(c.certificate));
  p.emplace_back("dds.sec.auth.builtin.PKI-DH.private_key", file(c.key));
  if (!c.crl.empty()) p.emplace_back("dds.sec.auth.builtin.PKI-DH.identity_crl", file(c.crl));
  p.emplace_back("dds.sec.access.plugin", "builtin.Access-Permissions");
  p.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions_ca", file(c.ca));
  p.emplace_back("dds.sec.access.builtin.Access-Permissions.governance", file(c.governance));
  p.emplace_back("dds.sec.access.builtin.Access-Permissions.permissions", file(c.permissions));
  p.emplace_back("dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC");
}

// Measurements only (bench_net): SIMTRAINER_STATE_MULTICAST=GROUP gives a station's state reader
// a multicast locator (GROUP, the domain's user multicast port), so that a writer with several
// such readers sends each frame once to the group instead of once per reader. Off by default: on
// loopback it measured no better than unicast (bench/README.md), and a network namespace with
// only `lo` has no multicast route.
std::optional<Locator_t> stateMulticast(int domain) {
  const char* group = std::getenv("SIMTRAINER_STATE_MULTICAST");
  if (group == nullptr || *group == '\0') return std::nullopt;
  Locator_t locator;
  locator.kind = LOCATOR_KIND_UDPv4;
  if (!IPLocator::setIPv4(locator, group))
    throw std::runtime_error(std::string("SIMTRAINER_STATE_MULTICAST: not an IPv4 address: ") +
                             group);
  locator.port = static_cast<std::uint32_t>(7400 + 250 * domain + 1);
  return locator;
}

}  // namespace

struct Bus::Impl {
  Discovery discovery;  // outlives the participant (deleted in ~Impl's body)
  bool secured = false;
  std::uint64_t writers_refused_before = 0;
  std::string station_prefix, instructor_prefix;  // "CLASS.station.", "CLASS.instructor."
  dds::DomainParticipant* participant = nullptr;
  dds::Publisher* publisher = nullptr;
  dds::Subscriber* subscriber = nullptr;
  Endpoint identity, state, pult, status, command, event;
  // Samples reused between calls (no allocation per frame once grown).
  gen::StateFrame state_out, state_in;

  ~Impl() {
    if (participant == nullptr) return;
    participant->delete_contained_entities();
    dds::DomainParticipantFactory::get_instance()->delete_participant(participant);
  }

  void topic(Endpoint& e, const char* name, dds::TopicDataType* type) {
    dds::TypeSupport support(type);
    support.register_type(participant);
    e.topic = participant->create_topic(name, support.get_type_name(), dds::TOPIC_QOS_DEFAULT);
    if (e.topic == nullptr)
      throw std::runtime_error(fmt::format("DDS: cannot create topic {}", name));
  }
  void write(Endpoint& e, const char* name, Delivery delivery, int depth = 1) {
    e.writer = publisher->create_datawriter(e.topic, writerQos(publisher, delivery, depth));
    if (e.writer == nullptr)
      throw std::runtime_error(fmt::format("DDS: cannot write topic {}", name));
  }
  void read(Endpoint& e, const char* name, Delivery delivery, int depth = 1,
            const std::optional<Locator_t>& multicast = std::nullopt) {
    dds::DataReaderQos q = readerQos(subscriber, delivery, depth);
    if (multicast) q.endpoint().multicast_locator_list.push_back(*multicast);
    e.reader = subscriber->create_datareader(e.topic, q);
    if (e.reader == nullptr)
      throw std::runtime_error(fmt::format("DDS: cannot read topic {}", name));
  }
};

Bus::Bus(const ClassAddress& address, Role role) : impl_(std::make_unique<Impl>()) {
  if (address.domain < 0 || address.domain > 232) {
    throw std::runtime_error(fmt::format("domain {}: must be 0..232", address.domain));
  }
  if (address.partition.empty()) throw std::runtime_error("the partition must not be empty");
  dds::DomainParticipantQos pq;
  pq.name(role == Role::Server
              ? "simtrainer-serve"
              : (role == Role::Station ? "simtrainer-view" : "simtrainer-instruct"));
  pq.transport().use_builtin_transports = false;
  auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
  // Announce to the unicast ports of the first 32 participants of each peer, not only 4: a test
  // runs a server, stations, an instructor and itself on one host.
  udp->maxInitialPeersRange = 32;
  pq.transport().user_transports.push_back(udp);
  auto& peers = pq.wire_protocol().builtin.initialPeersList;
  Locator_t multicast;
  multicast.kind = LOCATOR_KIND_UDPv4;
  IPLocator::setIPv4(multicast, "239.255.0.1");
  multicast.port = static_cast<std::uint32_t>(7400 + 250 * address.domain);
  peers.push_back(multicast);
  std::vector<std::string> unicast = address.peers;
  if (std::find(unicast.begin(), unicast.end(), "127.0.0.1") == unicast.end())
    unicast.push_back("127.0.0.1");
  for (const std::string& peer : unicast) {
    Locator_t locator;
    locator.kind = LOCATOR_KIND_UDPv4;
    if (!IPLocator::setIPv4(locator, peer))
      throw std::runtime_error("peer: not an IPv4 address: " + peer);
    peers.push_back(locator);
  }
  Impl& d = *impl_;
  dds::PublisherQos pubq = dds::PUBLISHER_QOS_DEFAULT;
  dds::SubscriberQos subq = dds::SUBSCRIBER_QOS_DEFAULT;
  if (address.security.empty()) {
    pubq.partition().push_back(address.partition.c_str());
    subq.partition().push_back(address.partition.c_str());
  } else {
    // Stations and instructors write in partitions of their own names, which their permissions
    // confine them to; the server reads all of them and so knows who wrote each sample.
    const security::Credentials credentials = security::loadCredentials(address.security);
    secure(pq, credentials);
    countRefusedWriters();
    d.writers_refused_before = g_writers_refused.load();
    d.secured = true;
    d.station_prefix = address.partition + ".station.";
    d.instructor_prefix = address.partition + ".instructor.";
    if (role == Role::Server) {
      pubq.partition().push_back(address.partition.c_str());
      subq.partition().push_back((d.station_prefix + "*").c_str());
      subq.partition().push_back((d.instructor_prefix + "*").c_str());
    } else {
      const auto mine = security::writerPartition(
          address.partition,
          role == Role::Station ? security::Role::Station : security::Role::Instructor,
          credentials.name);
      pubq.partition().push_back(mine.c_str());
      subq.partition().push_back(address.partition.c_str());
      subq.partition().push_back((d.station_prefix + "*").c_str());
    }
  }
  d.participant = dds::DomainParticipantFactory::get_instance()->create_participant(
      static_cast<dds::DomainId_t>(address.domain), pq, &d.discovery, dds::StatusMask::none());
  if (d.participant == nullptr) {
    throw std::runtime_error(
        address.security.empty()
            ? fmt::format("DDS: cannot join domain {}", address.domain)
            : fmt::format("DDS: cannot join domain {} with the security files of {} (Fast DDS "
                          "refused them: see its messages above)",
                          address.domain, address.security));
  }
  d.publisher = d.participant->create_publisher(pubq);
  d.subscriber = d.participant->create_subscriber(subq);
  if (d.publisher == nullptr || d.subscriber == nullptr)
    throw std::runtime_error("DDS: no publisher/subscriber");
  d.topic(d.identity, "simtrainer/identity", new gen::SceneIdentityPubSubType());
  d.topic(d.state, "simtrainer/state", new gen::StateFramePubSubType());
  d.topic(d.pult, "simtrainer/pult", new gen::PultInputPubSubType());
  d.topic(d.status, "simtrainer/status", new gen::StationStatusPubSubType());
  d.topic(d.command, "simtrainer/command", new gen::CommandPubSubType());
  d.topic(d.event, "simtrainer/event", new gen::EventPubSubType());
  constexpr int kQueue = 64;  // reliable readers: samples of several writers between two polls
  if (role == Role::Server) {
    d.write(d.identity, "identity", Delivery::Latched);
    d.write(d.state, "state", Delivery::Newest);
    d.write(d.event, "event", Delivery::Reliable, kQueue);
    d.read(d.pult, "pult", Delivery::Reliable, kQueue);
    d.read(d.command, "command", Delivery::Reliable, kQueue);
  } else {
    d.read(d.identity, "identity", Delivery::Latched);
    d.read(d.state, "state", Delivery::Newest, 1, stateMulticast(address.domain));
    d.read(d.event, "event", Delivery::Reliable, kQueue);
    d.read(d.status, "status", Delivery::Reported, kQueue);
    d.write(d.status, "status", Delivery::Reported, 1);
    if (role == Role::Station) d.write(d.pult, "pult", Delivery::Reliable, 4);
    if (role == Role::Instructor) d.write(d.command, "command", Delivery::Reliable, kQueue);
  }
}

Bus::~Bus() = default;

void Bus::publishIdentity(const SceneIdentity& in) {
  gen::SceneIdentity s;
  impl_->identity.writer->write(&toWire(in, s));
}

bool Bus::takeIdentity(SceneIdentity& out) {
  gen::SceneIdentity s;
  return takeNext(impl_->identity.reader, s, out);
}

void Bus::publishState(const StateFrame& in) {
  impl_->state.writer->write(&toWire(in, impl_->state_out));
}

bool Bus::takeState(StateFrame& out) {
  return takeNext(impl_->state.reader, impl_->state_in, out);
}

void Bus::publishPult(const PultInput& in) {
  gen::PultInput s;
  impl_->pult.writer->write(&toWire(in, s));
}

bool Bus::takePult(PultInput& out) {
  gen::PultInput s;
  eprosima::fastrtps::rtps::GUID_t writer;
  if (!takeNext(impl_->pult.reader, s, out, &writer)) return false;
  out.writer = impl_->secured ? impl_->discovery.nameAfter(writer, impl_->station_prefix) : "";
  return true;
}

void Bus::publishStatus(const StationStatus& in) {
  gen::StationStatus s;
  impl_->status.writer->write(&toWire(in, s));
}

bool Bus::takeStatus(StationStatus& out) {
  gen::StationStatus s;
  return takeNext(impl_->status.reader, s, out);
}

void Bus::publishCommand(const Command& in) {
  gen::Command s;
  impl_->command.writer->write(&toWire(in, s));
}

bool Bus::takeCommand(Command& out) {
  gen::Command s;
  eprosima::fastrtps::rtps::GUID_t writer;
  if (!takeNext(impl_->command.reader, s, out, &writer)) return false;
  out.writer = impl_->secured ? impl_->discovery.nameAfter(writer, impl_->instructor_prefix) : "";
  return true;
}

std::uint64_t Bus::participantsRefused() const {
  return impl_->discovery.refused();
}

std::uint64_t Bus::writersRefused() const {
  return impl_->secured ? g_writers_refused.load() - impl_->writers_refused_before : 0;
}

void Bus::publishEvent(const Event& in) {
  gen::Event s;
  toWire(in, s);
  if (in.text.size() > 1000) s.text(in.text.substr(0, 1000));  // within string<1024>
  impl_->event.writer->write(&s);
}

bool Bus::takeEvent(Event& out) {
  gen::Event s;
  return takeNext(impl_->event.reader, s, out);
}

int Bus::stateSubscribers() const {
  dds::PublicationMatchedStatus status;
  if (impl_->state.writer == nullptr) return 0;
  impl_->state.writer->get_publication_matched_status(status);
  return status.current_count;
}

namespace {
// Every matched reader has acknowledged every sample of `writer` within `timeout_s`; false also
// when no reader is matched (nobody to acknowledge: not delivered).
bool acknowledged(dds::DataWriter* writer, double timeout_s) {
  if (writer == nullptr) return false;
  dds::PublicationMatchedStatus matched;
  writer->get_publication_matched_status(matched);
  if (matched.current_count == 0) return false;
  const double t = std::max(0.0, timeout_s);
  const auto seconds = static_cast<std::int32_t>(t);
  const auto nanoseconds = static_cast<std::uint32_t>((t - seconds) * 1e9);
  return writer->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(seconds, nanoseconds)) ==
         eprosima::fastrtps::types::ReturnCode_t::RETCODE_OK;
}
}  // namespace

bool Bus::identityAcknowledged(double timeout_s) const {
  return acknowledged(impl_->identity.writer, timeout_s);
}

bool Bus::commandsAcknowledged(double timeout_s) const {
  return acknowledged(impl_->command.writer, timeout_s);
}

namespace {

int matchedReaders(dds::DataWriter* writer) {
  dds::PublicationMatchedStatus status;
  if (writer == nullptr) return 0;
  writer->get_publication_matched_status(status);
  return status.current_count;
}

}  // namespace

int Bus::commandSubscribers() const {
  return matchedReaders(impl_->command.writer);
}

int Bus::pultSubscribers() const {
  return matchedReaders(impl_->pult.writer);
}

}  // namespace sim::engine::remote
