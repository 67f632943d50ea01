//===- ManifestEntry.h - Checks of one entry of the manifest ----*- C++ -*-===//
//
// The parts of parsing an entry point (Manifest.cpp's parseEntry) that check how its
// pieces fit together: buffers, views and steps (ManifestBuffers.cpp), and the names of
// its dynamic dimensions (ManifestDims.cpp). Failures throw Error (INVALID_MODEL) naming
// the JSON path.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MANIFESTENTRY_H
#define KILN_RUNTIME_MANIFESTENTRY_H

#include "Json.h"
#include "Manifest.h"

namespace kiln::rt {

/// How many inputs, parameters, states and buffers a buffer's index may refer to.
struct BufferIndexLimits {
  size_t inputs, parameters, states, buffers;
};

/// One of an entry's "buffers".
BufferDesc getBuffer(const Json &object, const std::string &path,
                     const BufferIndexLimits &limits);

/// Follows view_of links to the buffer that owns the memory, rejecting cycles, and finds
/// the strides each view uses: its own, those of the strided view it views, or none.
void resolveViewRoots(EntryDesc &e, const std::string &path);

/// Checks each buffer against what it holds (input, parameter, state, viewed buffer) and
/// each input and output against its buffer.
void checkBufferConsistency(const EntryDesc &e, const std::vector<TensorDesc> &params,
                            const std::vector<StateDesc> &states,
                            const std::string &path);

/// Steps must only read memory that holds data: inputs, parameters, states, or what an
/// earlier step wrote; and must never write the caller's inputs or the shared weights.
/// Records the states the entry creates or writes.
void checkSteps(EntryDesc &e, const std::vector<std::string> &kernels,
                const std::string &path);

/// A temp's "live" range must lie within the steps, cover every step that touches its
/// memory (itself or through a view) and, for an output's memory, run to the last step:
/// the session lets temps whose ranges do not overlap share bytes.
void checkLiveRanges(const EntryDesc &e, const std::string &path);

/// Assigns a slot to every name bound by an input's shape, a state buffer's shape (one
/// without "create") or a value_dim input, and checks every other use is bound.
void resolveDims(EntryDesc &e, const std::string &path);

/// Reads the entry's optional "dim_max" ({"T": 32}) into e.dimMax: each name must be one
/// that resolveDims bound, each bound a positive integer.
void getDimMax(EntryDesc &e, const Json &object, const std::string &path);

/// Reads the entry's optional "trim" ({"dim": "S", "lengths": "src_lengths"}): a name
/// that an input's shape binds, and a rank-1 i32 input whose values are at most that
/// dimension; every input and output axis that mentions the name must be the name.
void getTrim(EntryDesc &e, const Json &object, const std::string &path);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MANIFESTENTRY_H
