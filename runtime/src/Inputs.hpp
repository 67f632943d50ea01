// Inputs.hpp - checking a run's inputs against an entry and binding its dynamic dimensions.
#pragma once

#include "Manifest.hpp"

#include <vector>

namespace kiln::rt {

// Matches the caller's tensors to the entry's inputs by name (result in entry order) and
// checks each one's dtype, rank and data. Throws INVALID_ARGUMENT / NOT_FOUND.
std::vector<const kiln_tensor*> matchInputs(const EntryDesc& entry, const kiln_tensor* inputs,
                                            size_t count);

// Binds every dynamic dimension (values[slot]) from the inputs' bare-name dims, then checks
// every other input dim against its static size or expression. Throws INVALID_ARGUMENT.
void bindDims(const EntryDesc& entry, const std::vector<const kiln_tensor*>& inputs,
              std::vector<int64_t>& values);

// "B=2, S=3", for messages.
std::string formatBindings(const EntryDesc& entry, const std::vector<int64_t>& values);

} // namespace kiln::rt
