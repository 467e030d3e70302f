#pragma once
/// \file
/// The pipeline's hand-offs use the systems codec of baton/dynamics/wire.hpp; its names, here in
/// baton::pipeline too.

#include "baton/dynamics/wire.hpp"

namespace baton::pipeline {

using dynamics::copy_to_host;
using dynamics::decode_host_systems;
using dynamics::decode_wire_header;
using dynamics::empty_host_wire;
using dynamics::encode_host_systems;
using dynamics::host_ints_view;
using dynamics::host_reals_view;
using dynamics::HostWire;
using dynamics::index_of;
using dynamics::pack_systems;
using dynamics::read_wire_header;
using dynamics::read_wire_index;
using dynamics::to_device;
using dynamics::unpack_systems;
using dynamics::wire_abort;
using dynamics::wire_end_of_stream;
using dynamics::wire_header_size;
using dynamics::wire_index_size;
using dynamics::wire_int_count;
using dynamics::wire_magic;
using dynamics::wire_real_count;
using dynamics::wire_species;
using dynamics::wire_version;
using dynamics::WireBatch;
using dynamics::WireHeader;
using dynamics::WireIndex;
using dynamics::WireLayout;

}  // namespace baton::pipeline
