//===- OutputBuffer.h - An output's memory handed to the caller -*- C++ -*-===//
//
// What kiln_session_detach_output returns: the block a session computed an output in,
// taken out of the session together with the output's description, so that it outlives
// the session's next run and the session itself.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_OUTPUTBUFFER_H
#define KILN_RUNTIME_OUTPUTBUFFER_H

#include "TempBlock.h"

#include "kiln/runtime.h"

#include <string>
#include <vector>

namespace kiln::rt {

struct OutputBuffer {
  TempBlock memory;
  void *data = nullptr; // the output's first element, inside memory
  std::string name;     // copied: the buffer may outlive the model
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_OUTPUTBUFFER_H
