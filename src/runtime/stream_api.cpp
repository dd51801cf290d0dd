// The public stream and event API (stream.h) over the CUDA runtime's StreamRuntime.

#include <utility>

#include "locus/errors.h"
#include "locus/stream.h"
#include "locus/tensor.h"
#include "src/runtime/device_runtime.h"

namespace locus {
namespace {

runtime::DeviceRuntime& cuda_runtime() { return runtime::runtime(DeviceType::CUDA); }

runtime::StreamRuntime& streams() {
  runtime::StreamRuntime* s = cuda_runtime().streams();
  if (!s) throw BackendUnavailableError("CUDA streams are not available in this build");
  return *s;
}

// A concrete device index (the current device for -1); IndexError for a missing one.
int resolve(int device) {
  return runtime::resolve_device(device < 0 ? Device(DeviceType::CUDA) : Device(DeviceType::CUDA, device)).index();
}

}  // namespace

namespace cuda {

Stream::Stream(int device, int priority) : device_(resolve(device)) { id_ = streams().pool_stream(device_, priority < 0); }
int Stream::priority() const { return streams().stream_priority(id_); }
bool Stream::query() const { return streams().query(id_); }
void Stream::synchronize() const { streams().synchronize(id_); }
void Stream::wait_stream(const Stream& other) const { streams().wait_stream(id_, other.id_); }
void Stream::wait_event(const Event& event) const {
  if (event.native_) streams().stream_wait_event(id_, event.native_);
}
Event Stream::record_event() const {
  Event e;
  e.record(*this);
  return e;
}
void* Stream::native_handle() const { return streams().native_handle(id_); }

Stream current_stream(int device) {
  const int d = resolve(device);
  return Stream::from_id(d, streams().current_stream(d));
}

Stream default_stream(int device) {
  const int d = resolve(device);
  return Stream::from_id(d, streams().default_stream(d));
}

void set_stream(const Stream& stream) { streams().set_current_stream(stream.device().index(), stream.id()); }

void synchronize(int device) { cuda_runtime().synchronize(resolve(device)); }

StreamGuard::StreamGuard(const Stream& stream)
    : previous_stream_(current_stream(stream.device().index())), previous_device_(cuda_runtime().current_device()) {
  cuda_runtime().set_device(stream.device().index());
  set_stream(stream);
}

StreamGuard::~StreamGuard() {
  streams().set_current_stream(previous_stream_.device().index(), previous_stream_.id());
  cuda_runtime().set_device(previous_device_);
}

Event::Event(Event&& o) noexcept
    : timing_(o.timing_), device_(std::exchange(o.device_, -1)), native_(std::exchange(o.native_, nullptr)) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    if (native_) streams().event_destroy(native_);
    timing_ = o.timing_;
    device_ = std::exchange(o.device_, -1);
    native_ = std::exchange(o.native_, nullptr);
  }
  return *this;
}

Event::~Event() {
  // An event exists only where CUDA works, so the stream runtime is there to destroy it.
  if (native_) runtime::find_runtime(DeviceType::CUDA)->streams()->event_destroy(native_);
}

void Event::record() { record(current_stream()); }

void Event::record(const Stream& stream) {
  const int d = stream.device().index();
  if (native_ && d != device_)
    throw ValueError("Event was first recorded on cuda:" + std::to_string(device_) +
                     " and cannot be recorded on a stream of cuda:" + std::to_string(d) +
                     "; use one Event per device");
  if (!native_) {
    native_ = streams().event_create(d, timing_);
    device_ = d;
  }
  streams().event_record(native_, stream.id());
}

bool Event::query() const { return !native_ || streams().event_query(native_); }

void Event::synchronize() const {
  if (native_) streams().event_synchronize(native_);
}

float Event::elapsed_time(const Event& end) const {
  if (!timing_ || !end.timing_)
    throw ValueError("elapsed_time needs two events created with enable_timing=true");
  if (!native_ || !end.native_) throw ValueError("elapsed_time needs both events to have been recorded");
  return streams().event_elapsed_ms(native_, end.native_);
}

}  // namespace cuda

void Tensor::record_stream(const cuda::Stream& stream) const {
  if (!is_cuda() || device() != stream.device())
    throw ValueError("record_stream: the tensor is on " + device().str() + " but the stream belongs to " +
                     stream.device().str() + "; a stream can only use tensors of its own device");
  runtime::allocator_for(device()).record_stream(impl()->storage()->data_ptr(), stream.id());
}

}  // namespace locus
