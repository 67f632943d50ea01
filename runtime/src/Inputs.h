//===- Inputs.h - Checking a run's inputs -----------------------*- C++ -*-===//
//
// Checking a run's inputs against an entry and binding its dynamic dimensions.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INPUTS_H
#define KILN_RUNTIME_INPUTS_H

#include "Manifest.h"

#include <vector>

namespace kiln::rt {

// Matches the caller's tensors to the entry's inputs by name (result in entry order) and
// checks each one's dtype, rank and data. Throws INVALID_ARGUMENT / NOT_FOUND.
std::vector<const kiln_tensor *> matchInputs(const EntryDesc &entry,
                                             const kiln_tensor *inputs, size_t count);

// A run binds an entry's dimensions in this order (docs/manifest.md): from the inputs'
// shapes (bindInputDims), from the states it reads (StateSet::bindDims), from value_dim
// inputs once their bounds hold (checkBounds of them, then bindValueDims); then every
// other input dim is checked (checkInputDims) and the other inputs' bounds.

// Sizes values to the entry's slots (-1: unbound) and binds those the inputs' bare-name
// dims name. Throws INVALID_ARGUMENT when two inputs disagree.
void bindInputDims(const EntryDesc &entry, const std::vector<const kiln_tensor *> &inputs,
                   std::vector<int64_t> &values);

// Binds each value_dim input's dimension to its value. Throws INVALID_ARGUMENT for a
// negative value.
void bindValueDims(const EntryDesc &entry, const std::vector<const kiln_tensor *> &inputs,
                   std::vector<int64_t> &values);

// Checks every input dim that does not bind a name against its static size or expression.
// Throws INVALID_ARGUMENT.
void checkInputDims(const EntryDesc &entry,
                    const std::vector<const kiln_tensor *> &inputs,
                    const std::vector<int64_t> &values);

// Which inputs checkBounds looks at.
enum class BoundsOf { AllInputs, ValueDimInputs, OtherInputs };

// Checks every element of each input that declares bounds against them, evaluated with
// the bound dimensions: one pass over the data, no allocation unless an element is out of
// bounds. Throws INVALID_ARGUMENT naming the first element outside its bounds.
void checkBounds(const EntryDesc &entry, const std::vector<const kiln_tensor *> &inputs,
                 const std::vector<int64_t> &values,
                 BoundsOf which = BoundsOf::AllInputs);

// The input (by index) whose shape binds the slot, or -1.
int inputBinding(const EntryDesc &entry, int slot);

// "B=2, S=3", for messages.
std::string formatBindings(const EntryDesc &entry, const std::vector<int64_t> &values);

} // namespace kiln::rt

#endif // KILN_RUNTIME_INPUTS_H
