#pragma once
/// \file
/// Moving View contents to and from the wire form: envelope, then the elements contiguous in the
/// envelope's layout (internal; used by View messages, collectives and bundles).

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/transport/detail/view_path.hpp"
#include "baton/transport/envelope.hpp"

namespace baton::detail {

template <class V>
inline constexpr int rank_v = static_cast<int>(V::rank);  // an enum in Kokkos 3, a constant in 4+

template <class V>
using value_t = typename V::non_const_value_type;

template <class V>
inline constexpr bool left_or_right_v =
    std::is_same_v<typename V::array_layout, Kokkos::LayoutLeft> ||
    std::is_same_v<typename V::array_layout, Kokkos::LayoutRight>;

template <class V>
inline constexpr bool host_view_v = host_accessible_v<typename V::memory_space>;

/// The layout a View's memory has on the wire when sent as is.
template <class V>
constexpr WireLayout natural_layout() {
  return (rank_v<V> >= 2 && std::is_same_v<typename V::array_layout, Kokkos::LayoutLeft>)
             ? WireLayout::left
             : WireLayout::right;
}

/// Contiguous, in a layout the envelope can name: the View's memory is the wire data as is.
template <class V>
bool in_wire_form(const V& v) {
  if (!v.span_is_contiguous())
    return false;
  if constexpr (rank_v<V> <= 1) {
    return true;
  } else {
    return left_or_right_v<V>;
  }
}

/// Left and right order the elements the same way when at most one extent exceeds 1.
inline bool layouts_agree(const ViewEnvelope& e, WireLayout other) {
  if (e.layout == other || e.rank < 2)
    return true;
  int long_extents = 0;
  for (int d = 0; d < e.rank; ++d)
    long_extents += e.extents[d] > 1 ? 1 : 0;
  return long_extents <= 1;
}

template <class V>
ViewEnvelope envelope_of(const V& v, WireLayout layout) {
  static_assert(rank_v<V> <= 8, "View messages carry ranks 0 to 8");
  ViewEnvelope e;
  e.value_type = value_type_of<value_t<V>>();
  e.rank = static_cast<std::uint8_t>(rank_v<V>);
  e.layout = layout;
  for (int d = 0; d < rank_v<V>; ++d)
    e.extents[d] = v.extent(d);
  return e;
}

/// The envelope a View of type V with these extents would have (for error messages).
template <class V>
std::string describe_view(const V& v) {
  return envelope_of(v, natural_layout<V>()).describe();
}

template <class Layout, class Extents>
Layout make_layout(int rank, const Extents& extents) {
  Layout layout;
  for (int d = 0; d < rank; ++d)
    layout.dimension[d] = static_cast<std::size_t>(extents[d]);
  return layout;
}

template <class V, class Layout>
Layout layout_like(const V& v) {
  Layout layout;
  for (int d = 0; d < rank_v<V>; ++d)
    layout.dimension[d] = v.extent(d);
  return layout;
}

/// A View over `data` in memory space MS with V's shape and the given layout (not owning).
template <class V, class Layout, class MS, class Ptr>
auto unmanaged_like(Ptr data, const V& v) {
  using U = Kokkos::View<typename V::non_const_data_type, Layout, MS,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return U(data, layout_like<V, Layout>(v));
}

/// Kokkos::deep_copy on the execution space instance `space` when one side is not host memory
/// (asynchronous: fence `space` before relying on the result), a plain host copy otherwise.
template <class Exec, class Dst, class Src>
void deep_copy_on(const Exec& space, const Dst& dst, const Src& src) {
  if constexpr (host_view_v<Dst> && host_view_v<Src>) {
    Kokkos::deep_copy(dst, src);
  } else {
    Kokkos::deep_copy(space, dst, src);
  }
}

/// The execution space of a copy between Views of types Dst and Src: the device side's.
template <class Dst, class Src>
using copy_space_t = std::conditional_t<host_view_v<Dst>, typename Src::execution_space,
                                        typename Dst::execution_space>;

/// dst = src where both have the same shape, any layouts, any memory spaces, on the instance
/// `space`, which is fenced at the end when device memory was involved (never the whole space).
/// Copies that Kokkos cannot do in one step (different layout and different space) go through a
/// temporary in src's space.
template <class Exec, class Dst, class Src>
void copy_view(const Exec& space, const Dst& dst, const Src& src) {
  using DstSpace = typename Dst::memory_space;
  using SrcSpace = typename Src::memory_space;
  constexpr bool same_layout =
      std::is_same_v<typename Dst::array_layout, typename Src::array_layout>;
  if constexpr (host_view_v<Dst> && host_view_v<Src>) {
    Kokkos::deep_copy(dst, src);
  } else if constexpr (std::is_same_v<DstSpace, SrcSpace>) {
    deep_copy_on(space, dst, src);
    space.fence();
  } else if constexpr (same_layout) {
    if (dst.span_is_contiguous() && src.span_is_contiguous()) {
      deep_copy_on(space, dst, src);
      space.fence();
    } else {
      Kokkos::View<typename Dst::non_const_data_type, typename Dst::array_layout, SrcSpace> tmp(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::copy"),
          layout_like<Src, typename Dst::array_layout>(src));
      deep_copy_on(space, tmp, src);
      deep_copy_on(space, dst, tmp);
      space.fence();  // before tmp is freed (here and below)
    }
  } else {
    // Re-layout where the data is, then move between spaces with matching layouts.
    using L = std::conditional_t<std::is_same_v<typename Dst::array_layout, Kokkos::LayoutStride>,
                                 Kokkos::LayoutRight, typename Dst::array_layout>;
    Kokkos::View<typename Dst::non_const_data_type, L, SrcSpace> tmp(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::copy"), layout_like<Src, L>(src));
    deep_copy_on(space, tmp, src);
    if constexpr (std::is_same_v<L, typename Dst::array_layout>) {
      deep_copy_on(space, dst, tmp);
      space.fence();
    } else {
      Kokkos::View<typename Dst::non_const_data_type, L, DstSpace> near(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::copy"), layout_like<Src, L>(src));
      deep_copy_on(space, near, tmp);
      deep_copy_on(space, dst, near);
      space.fence();
    }
  }
}

/// copy_view on the default instance of the device side's execution space.
template <class Dst, class Src>
void copy_view(const Dst& dst, const Src& src) {
  copy_view(copy_space_t<Dst, Src>(), dst, src);
}

/// True when v's memory holds exactly the wire data in `layout`, in host memory: a plain memcpy.
template <class V>
bool plain_host_copy(const V& v, WireLayout layout) {
  if constexpr (host_view_v<V>) {
    return in_wire_form(v) && layouts_agree(envelope_of(v, layout), natural_layout<V>());
  } else {
    return false;
  }
}

/// Writes v's elements, contiguous in `layout`, to host memory at `out` (v.size() elements);
/// device-side work runs on `space`, fenced before returning.
template <class Exec, class V>
void copy_to_host(const Exec& space, const V& v, value_t<V>* out, WireLayout layout) {
  if (plain_host_copy(v, layout)) {
    if (v.size())
      std::memcpy(out, v.data(), v.size() * sizeof(value_t<V>));
    return;
  }
  if (layout == WireLayout::left) {
    copy_view(space, unmanaged_like<V, Kokkos::LayoutLeft, Kokkos::HostSpace>(out, v), v);
  } else {
    copy_view(space, unmanaged_like<V, Kokkos::LayoutRight, Kokkos::HostSpace>(out, v), v);
  }
}

template <class V>
void copy_to_host(const V& v, value_t<V>* out, WireLayout layout) {
  copy_to_host(typename V::execution_space(), v, out, layout);
}

/// Fills v from host memory holding its elements contiguous in `layout`; device-side work runs on
/// `space`, fenced before returning (so `in` may be freed then).
template <class Exec, class V>
void copy_from_host(const Exec& space, const V& v, const value_t<V>* in, WireLayout layout) {
  if (plain_host_copy(v, layout)) {
    if (v.size())
      std::memcpy(v.data(), in, v.size() * sizeof(value_t<V>));
    return;
  }
  auto* data =
      const_cast<value_t<V>*>(in);  // read only; Kokkos' unmanaged Views want non-const here
  if (layout == WireLayout::left) {
    copy_view(space, v, unmanaged_like<V, Kokkos::LayoutLeft, Kokkos::HostSpace>(data, v));
  } else {
    copy_view(space, v, unmanaged_like<V, Kokkos::LayoutRight, Kokkos::HostSpace>(data, v));
  }
}

template <class V>
void copy_from_host(const V& v, const value_t<V>* in, WireLayout layout) {
  copy_from_host(typename V::execution_space(), v, in, layout);
}

/// Copies the elements at `in` (memory space MS, contiguous in `layout`, v's shape) into v on
/// `space`, fenced before returning.
template <class MS, class Exec, class V>
void copy_from_wire(const Exec& space, const V& v, value_t<V>* in, WireLayout layout) {
  if (layout == WireLayout::left) {
    copy_view(space, v, unmanaged_like<V, Kokkos::LayoutLeft, MS>(in, v));
  } else {
    copy_view(space, v, unmanaged_like<V, Kokkos::LayoutRight, MS>(in, v));
  }
}

/// Exec is an execution space whose instance may be handed to Baton with View v of type V: it can
/// reach V's memory, or V is host memory (then host copies run on the host and the instance is
/// only fenced).
template <class Exec, class V>
struct reaches_view
    : std::bool_constant<host_view_v<V> ||
                         Kokkos::SpaceAccessibility<Exec, typename V::memory_space>::accessible> {};
template <class Exec, class V>
inline constexpr bool usable_space_v =
    std::conjunction_v<Kokkos::is_execution_space<Exec>, Kokkos::is_view<V>, reaches_view<Exec, V>>;

/// Enables the overloads that take an execution space instance first.
template <class Exec, class V>
using if_space_t = std::enable_if_t<usable_space_v<Exec, V>, int>;

/// Error context, built only when an error is thrown: a string naming the operation
/// ("baton::recv_into"), or a callable returning {operation, details}.
/// The message reads "<operation>: <what>" or "<operation>: <what> (<details>)".
template <class Where>
std::string error_text(const Where& where, const std::string& what) {
  if constexpr (std::is_invocable_v<const Where&>) {
    const std::pair<std::string, std::string> context = where();
    return context.first + ": " + what +
           (context.second.empty() ? std::string() : " (" + context.second + ")");
  } else {
    return std::string(where) + ": " + what;
  }
}

/// Throws baton::Error unless the envelope matches View v's value type, rank and extents.
template <class V, class Where>
void check_matches(const ViewEnvelope& e, const V& v, const Where& where) {
  bool same = e.value_type == value_type_of<value_t<V>>() && e.rank == rank_v<V>;
  for (int d = 0; same && d < rank_v<V>; ++d)
    same = e.extents[d] == v.extent(d);
  if (!same) {
    throw Error(error_text(where, "the message is " + e.describe() + ", the View is " +
                                      describe_view(v) + "; the message was consumed"));
  }
}

/// Throws baton::Error unless the envelope can fill a View of type V (type, rank, static extents).
template <class V, class Where>
void check_allocatable(const ViewEnvelope& e, const Where& where) {
  bool ok = e.value_type == value_type_of<value_t<V>>() && e.rank == rank_v<V>;
  for (int d = V::rank_dynamic; ok && d < rank_v<V>; ++d)
    ok = e.extents[d] == V::static_extent(d);
  if (!ok) {
    std::string want = std::string(to_string(value_type_of<value_t<V>>())) + " of rank " +
                       std::to_string(rank_v<V>);
    throw Error(error_text(where, "the message is " + e.describe() + ", the View type wants " +
                                      want + "; the message was consumed"));
  }
}

/// A View of type V allocated (not initialised) with the envelope's extents.
template <class V>
V allocate_like(const ViewEnvelope& e, const std::string& label) {
  return V(Kokkos::view_alloc(Kokkos::WithoutInitializing, label),
           make_layout<typename V::array_layout>(rank_v<V>, e.extents));
}

}  // namespace baton::detail
