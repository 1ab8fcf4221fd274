// LatestWriter: the thread the server writes its state frames on. The writes here block on a
// gate the test opens, so every interleaving asserted is forced, not hoped for.
#include "latest_writer.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <vector>

namespace {

using sim::engine::LatestWriter;

// A write that records the value and, while the gate is shut, waits inside the write.
class GatedSink {
 public:
  void write(int value) {
    std::unique_lock lock(mutex_);
    written_.push_back(value);
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  /// Blocks until `count` writes have started.
  void waitForWrites(std::size_t count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return written_.size() >= count; });
  }
  std::vector<int> written() {
    std::lock_guard lock(mutex_);
    return written_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> written_;
  bool open_ = false;
};

TEST(LatestWriter, ValuesPostedDuringASlowWriteCollapseToTheNewest) {
  GatedSink sink;
  LatestWriter<int> writer([&](const int& v) { sink.write(v); });
  int v = 1;
  writer.post(v);
  sink.waitForWrites(1);  // the thread is inside write(1)
  for (int next : {2, 3, 4}) {
    v = next;
    writer.post(v);  // never waits for the write in progress
  }
  sink.open();
  writer.stop();
  EXPECT_EQ(sink.written(), (std::vector<int>{1, 4}));
  EXPECT_EQ(writer.superseded(), 2u);  // 2 and 3
  EXPECT_EQ(writer.writeTimes().count(), 2u);
}

TEST(LatestWriter, StoppingWritesTheValueStillWaiting) {
  GatedSink sink;
  LatestWriter<int> writer([&](const int& v) { sink.write(v); });
  int v = 1;
  writer.post(v);
  sink.waitForWrites(1);
  v = 2;
  writer.post(v);
  writer.requestStop();  // asked to stop while 2 waits: 2 must still be written
  sink.open();
  writer.stop();
  EXPECT_EQ(sink.written(), (std::vector<int>{1, 2}));
  EXPECT_EQ(writer.superseded(), 0u);
}

TEST(LatestWriter, StopWithNothingPostedEndsAtOnceAndTwiceIsHarmless) {
  int writes = 0;
  LatestWriter<int> writer([&](const int&) { ++writes; });
  writer.stop();
  writer.stop();
  EXPECT_EQ(writes, 0);
}

}  // namespace
