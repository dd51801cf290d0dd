// locus_dlpack_probe: a test-only Python extension (not part of Locus) through which NumPy
// consumes Locus tensors and Locus consumes NumPy arrays, by the Python DLPack protocol
// (`__dlpack__` returning a "dltensor" or "dltensor_versioned" PyCapsule, renamed "used_..." by
// the consumer that takes it). numpy_dlpack_test.py drives it.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "locus/locus.h"

namespace py = pybind11;

namespace {

// How many exported structs have had their deleter called, by whichever consumer.
std::atomic<int> g_deleter_calls{0};

// Wraps Locus's struct in one whose deleter counts its calls before calling Locus's.
template <class Managed>
Managed* counted(Managed* inner) {
  struct Wrapper {
    Managed managed;
    Managed* inner;
  };
  auto* w = new Wrapper{*inner, inner};
  w->managed.manager_ctx = w;
  w->managed.deleter = [](Managed* self) {
    auto* w = static_cast<Wrapper*>(self->manager_ctx);
    ++g_deleter_calls;
    w->inner->deleter(w->inner);
    delete w;
  };
  return &w->managed;
}

// The capsule destructor of the DLPack Python protocol: a capsule nobody took (still named
// "dltensor"/"dltensor_versioned") gives its struct back through the deleter; a taken one
// ("used_...") belongs to its consumer. It may run with an exception set, which it keeps.
template <class Managed>
void capsule_destructor(PyObject* capsule) {
  constexpr const char* name = std::is_same_v<Managed, DLManagedTensor> ? "dltensor" : "dltensor_versioned";
  if (!PyCapsule_IsValid(capsule, name)) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
  PyErr_Restore(type, value, traceback);
}

locus::DType dtype_named(const std::string& name) {
  for (int i = 0; i < locus::kNumDTypes; ++i) {
    const auto d = static_cast<locus::DType>(i);
    if (locus::dtype_name(d) == name) return d;
  }
  throw py::value_error("no Locus dtype named " + name);
}

std::vector<int64_t> to_list(const locus::Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

// The Python face of a Locus tensor: what the tests read, a few views and writes, and the
// protocol's two methods.
struct Handle {
  locus::Tensor t;

  // The protocol's keywords (the array API's __dlpack__). The stream needs nothing: the export
  // waits for the current stream itself. Only this tensor's own device and no copy are offered.
  py::capsule dlpack(const py::object& max_version, const py::object& dl_device, const py::object& copy) const {
    if (!dl_device.is_none() && !dl_device.equal(dlpack_device()))
      throw py::buffer_error("locus_dlpack_probe exports a tensor only to its own device");
    if (!copy.is_none() && copy.cast<bool>()) throw py::buffer_error("locus_dlpack_probe exports without copying");
    const bool versioned = !max_version.is_none() && max_version.cast<py::tuple>()[0].cast<int>() >= 1;
    if (versioned)
      return py::capsule(counted(locus::to_dlpack_versioned(t)), "dltensor_versioned",
                         &capsule_destructor<DLManagedTensorVersioned>);
    return py::capsule(counted(locus::to_dlpack(t)), "dltensor", &capsule_destructor<DLManagedTensor>);
  }

  py::tuple dlpack_device() const {
    if (t.is_cuda()) return py::make_tuple(static_cast<int>(kDLCUDA), t.device().index());
    return py::make_tuple(static_cast<int>(kDLCPU), 0);
  }
};

// Takes a capsule, or asks an object for one (DLPack 1.x first, as the protocol says), and
// imports it; the capsule is renamed only once Locus owns the struct.
Handle import(const py::object& source) {
  py::object capsule = source;
  if (!py::isinstance<py::capsule>(source)) {
    try {
      capsule = source.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 1));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;  // a producer without max_version (NumPy 1.x)
      capsule = source.attr("__dlpack__")();
    }
  }
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, "dltensor_versioned")) {
    Handle h{locus::from_dlpack(static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned")))};
    PyCapsule_SetName(c, "used_dltensor_versioned");
    return h;
  }
  if (PyCapsule_IsValid(c, "dltensor")) {
    Handle h{locus::from_dlpack(static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor")))};
    PyCapsule_SetName(c, "used_dltensor");
    return h;
  }
  throw py::value_error("not an unused DLPack capsule");
}

}  // namespace

PYBIND11_MODULE(locus_dlpack_probe, m) {
  // Locus's typed errors as Python's nearest kinds; the most derived are registered last, since
  // pybind11 tries the newest translator first.
  py::register_exception<locus::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<locus::ValueError>(m, "ValueError", PyExc_ValueError);
  py::register_exception<locus::DTypeError>(m, "DTypeError", PyExc_TypeError);
  py::register_exception<locus::ShapeError>(m, "ShapeError", PyExc_ValueError);

  py::class_<Handle>(m, "Tensor")
      .def_property_readonly("shape", [](const Handle& h) { return to_list(h.t.shape()); })
      .def_property_readonly("strides", [](const Handle& h) { return to_list(h.t.strides()); })
      .def_property_readonly("storage_offset", [](const Handle& h) { return h.t.storage_offset(); })
      .def_property_readonly("dtype", [](const Handle& h) { return std::string(locus::dtype_name(h.t.dtype())); })
      .def_property_readonly("device", [](const Handle& h) { return h.t.device().str(); })
      .def_property_readonly("data_ptr", [](const Handle& h) { return reinterpret_cast<uintptr_t>(h.t.data_ptr()); })
      .def("tolist", [](const Handle& h) {
        return h.t.detach().cpu().to(locus::kFloat64).contiguous().to_vector<double>();
      })
      .def("reshape", [](const Handle& h, const std::vector<int64_t>& s) { return Handle{h.t.reshape(s)}; })
      .def("permute", [](const Handle& h, const std::vector<int64_t>& d) { return Handle{h.t.permute(d)}; })
      .def("narrow", [](const Handle& h, int64_t d, int64_t s, int64_t n) { return Handle{h.t.narrow(d, s, n)}; })
      // Python ints as int64, as PyTorch's Python numbers: an int tensor takes `t.add_(1)`.
      .def("add_", [](Handle& h, int64_t v) { h.t.add_(v); })
      .def("add_", [](Handle& h, double v) { h.t.add_(v); })
      .def("__dlpack__",
           [](const Handle& h, const py::object&, const py::object& max_version, const py::object& dl_device,
              const py::object& copy) { return h.dlpack(max_version, dl_device, copy); },
           py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
           py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", &Handle::dlpack_device);

  m.def("arange", [](int64_t n, const std::string& dtype, const std::string& device) {
    locus::Tensor t = locus::arange(n, locus::TensorOptions().device(locus::Device(device)));
    if (dtype == "bool") t = t.remainder(2);
    return Handle{t.to(dtype_named(dtype))};
  }, py::arg("n"), py::arg("dtype"), py::arg("device") = "cpu");
  m.def("from_dlpack", &import, "Imports an object with __dlpack__, or a DLPack capsule, into Locus");
  m.def("deleter_calls", [] { return g_deleter_calls.load(); });
  m.def("memory_allocated_cpu", [] { return locus::memory::memory_allocated(locus::Device("cpu")); });
}
