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

// Checks every element of each input that declares bounds against them, evaluated with
// the bound dimensions: one pass over the data, no allocation unless an element is out of
// bounds. Throws INVALID_ARGUMENT naming the first element outside its bounds.
void checkBounds(const EntryDesc& entry, const std::vector<const kiln_tensor*>& inputs,
                 const std::vector<int64_t>& values);

// "B=2, S=3", for messages.
std::string formatBindings(const EntryDesc& entry, const std::vector<int64_t>& values);

} // namespace kiln::rt
