#pragma once
/// \file tensor_impl.h
/// TensorImpl: a strided view (sizes, strides, offset, dtype) into a Storage.

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstdint>
#include <memory>

#include "locus/detail/intrusive_ptr.h"
#include "locus/detail/storage.h"
#include "locus/device.h"
#include "locus/dtype.h"
#include "locus/shape.h"

namespace locus::autograd {
class Node;
struct AutogradMeta;
}

namespace locus::detail {

/// The state behind a Tensor handle. Strides and offset count elements, not bytes.
/// Invariant: device() == storage's device; numel() == product of sizes.
class TensorImpl : public RefCounted {
 public:
  TensorImpl(intrusive_ptr<Storage> storage, DType dtype, Shape sizes, Shape strides, int64_t offset)
      : storage_(std::move(storage)), sizes_(std::move(sizes)), strides_(std::move(strides)),
        offset_(offset), dtype_(dtype), device_(storage_->device()) {
    refresh();
  }

  const intrusive_ptr<Storage>& storage() const noexcept { return storage_; }
  const Shape& sizes() const noexcept { return sizes_; }
  const Shape& strides() const noexcept { return strides_; }
  int64_t offset() const noexcept { return offset_; }
  int64_t numel() const noexcept { return numel_; }
  DType dtype() const noexcept { return dtype_; }
  Device device() const noexcept { return device_; }
  bool is_contiguous() const noexcept { return contiguous_; }
  bool requires_grad() const noexcept { return requires_grad_; }
  void set_requires_grad(bool r) noexcept { requires_grad_ = r; }
  /// The node that produced this tensor in the recorded graph (null for leaves and tensors
  /// made without recording), and which of that node's forward outputs this tensor is.
  const std::shared_ptr<autograd::Node>& grad_fn() const noexcept { return grad_fn_; }
  uint32_t output_nr() const noexcept { return output_nr_; }
  void set_grad_fn(std::shared_ptr<autograd::Node> fn, uint32_t output_nr = 0) noexcept {
    grad_fn_ = std::move(fn);
    output_nr_ = output_nr;
  }
  /// The rarely used autograd state (hooks, a retained gradient); null for most tensors, so
  /// they pay one pointer (src/autograd/node.h).
  const std::shared_ptr<autograd::AutogradMeta>& autograd_meta() const noexcept { return autograd_meta_; }
  void set_autograd_meta(std::shared_ptr<autograd::AutogradMeta> m) noexcept { autograd_meta_ = std::move(m); }
  /// For a view made by a view op (Note [Views and in-place ops] in src/autograd/in_place.cpp):
  /// the tensor it views (the first one, never itself a view), and the base's grad_fn when this
  /// view's grad_fn was made, so an in-place op on the base or on a sibling view, which gives
  /// the base a new grad_fn, is seen and this view's grad_fn made again.
  const intrusive_ptr<TensorImpl>& view_base() const noexcept { return view_base_; }
  const std::shared_ptr<autograd::Node>& view_base_fn() const noexcept { return view_base_fn_; }
  void set_view_base(intrusive_ptr<TensorImpl> base, std::shared_ptr<autograd::Node> base_fn) noexcept {
    view_base_ = std::move(base);
    view_base_fn_ = std::move(base_fn);
  }
  void set_view_base_fn(std::shared_ptr<autograd::Node> base_fn) noexcept { view_base_fn_ = std::move(base_fn); }
  /// The accumulated gradient of a leaf (null until backward reaches it).
  const intrusive_ptr<TensorImpl>& grad() const noexcept { return grad_; }
  void set_grad(intrusive_ptr<TensorImpl> g) noexcept { grad_ = std::move(g); }

  /// Address of the first element (storage base plus offset), on the tensor's device; null for
  /// an empty tensor without storage (a null base is never offset: that is undefined).
  void* data() const noexcept {
    char* base = static_cast<char*>(storage_->data());
    return base ? base + offset_ * static_cast<int64_t>(itemsize(dtype_)) : nullptr;
  }
  /// Takes over another impl's storage, dtype, device and geometry (Tensor::set_data).
  void set_data_from(const TensorImpl& src) {
    storage_ = src.storage_;
    dtype_ = src.dtype_;
    device_ = src.device_;
    set_geometry(src.sizes_, src.strides_, src.offset_);
  }
  /// Replaces the view's geometry (same storage); used by in-place view ops.
  void set_geometry(Shape sizes, Shape strides, int64_t offset) {
    sizes_ = std::move(sizes);
    strides_ = std::move(strides);
    offset_ = offset;
    refresh();
  }

 private:
  void refresh() noexcept {
    numel_ = sizes_.numel();
    int64_t expected = 1;
    contiguous_ = true;
    for (size_t i = sizes_.size(); i-- > 0;) {
      if (sizes_[i] != 1 && strides_[i] != expected) {
        contiguous_ = false;
        break;
      }
      expected *= sizes_[i];
    }
  }

  intrusive_ptr<Storage> storage_;
  Shape sizes_, strides_;
  int64_t offset_;
  int64_t numel_ = 0;
  DType dtype_;
  Device device_;
  bool requires_grad_ = false;
  bool contiguous_ = true;
  uint32_t output_nr_ = 0;
  std::shared_ptr<autograd::Node> grad_fn_;
  std::shared_ptr<autograd::AutogradMeta> autograd_meta_;
  intrusive_ptr<TensorImpl> grad_;
  intrusive_ptr<TensorImpl> view_base_;
  std::shared_ptr<autograd::Node> view_base_fn_;
};

}  // namespace locus::detail

LOCUS_API_END
