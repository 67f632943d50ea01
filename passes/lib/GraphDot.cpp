//===- GraphDot.cpp - Entry points as Graphviz pictures -------------------===//
//
// MLIR's op-graph printer draws every op with its generic attributes, truncates names at
// 20 characters and calls inputs arg0, which is unreadable for a model. This draws what
// the model's author wrote: inputs, outputs and parameters by name, ops by their result
// shapes in the entry's dimension names ([B, S, 512], from the symbolic shape rules) and
// their line of the model, and kernel groups as clusters. Graphviz puts a node in the
// first (sub)graph that mentions it, so every node is declared in its cluster before any
// edge is written.
//
//===----------------------------------------------------------------------===//

#include "kiln/passes/GraphDot.h"
#include "PassDetail.h"

#include "kiln/ir/SourceLocation.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace kiln;

namespace {

constexpr llvm::StringLiteral kInputStyle = "shape = ellipse, fillcolor = \"#dbe8fb\"";
constexpr llvm::StringLiteral kOutputStyle = "shape = ellipse, fillcolor = \"#dcf3dc\"";
constexpr llvm::StringLiteral kParameterStyle = "style = filled, fillcolor = \"#eeeeee\"";
constexpr llvm::StringLiteral kGroupStyle =
    "style = \"rounded,filled\"; fillcolor = \"#e6eefc\"";
constexpr llvm::StringLiteral kAttentionStyle =
    "style = \"rounded,filled\"; fillcolor = \"#fde9d4\"";

/// `text` escaped for a double-quoted DOT string. Control characters become visible
/// escapes (\x01) rather than breaking the line; UTF-8 passes through.
std::string escaped(StringRef text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c < 0x20 || c == 0x7f)
      out += "\\\\x" + llvm::utohexstr(c, /*LowerCase=*/true, /*Width=*/2);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string quoted(StringRef text) { return "\"" + escaped(text) + "\""; }

/// Lines of a node's label, centred, as one quoted DOT string.
std::string label(llvm::ArrayRef<std::string> lines) {
  return "\"" + llvm::join(llvm::map_range(lines, escaped), "\\n") + "\"";
}

/// The lines of the model that an op's location points at, as (file name, line), each
/// list sorted: the user's lines, and the innermost nn module's lines for an op built
/// inside one (a fused op's location has a chain per op it came from).
struct ModelLines {
  std::vector<std::pair<std::string, unsigned>> user, module;
};

ModelLines modelLines(Location loc) {
  ModelLines lines;
  auto add = [](std::vector<std::pair<std::string, unsigned>> &list,
                const SourceFrame &frame) {
    list.emplace_back(baseName(frame.file), frame.line);
  };
  for (const std::vector<SourceFrame> &chain : sourceChains(loc)) {
    add(lines.user, chain.front());
    if (chain.size() > 1)
      add(lines.module, chain.back());
  }
  for (auto *list : {&lines.user, &lines.module}) {
    llvm::sort(*list);
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return lines;
}

/// "Model.cpp:41, 44; Layers.h:12", or "" when `loc` names no file.
std::string lineText(llvm::ArrayRef<std::pair<std::string, unsigned>> lines) {
  std::string text;
  llvm::StringRef file;
  for (const auto &[name, line] : lines) {
    text += name == file ? ", " : (text.empty() ? "" : "; ") + name + ":";
    text += std::to_string(line);
    file = name;
  }
  return text;
}

/// Opens `subgraph cluster_ID` with a title; the caller closes it with endCluster.
void beginCluster(raw_indented_ostream &os, unsigned id, StringRef title,
                  StringRef style) {
  os << "subgraph cluster_" << id << " {\n";
  os.indent();
  os << "label = " << quoted(title) << ";\nfontsize = 10;\n" << style << ";\n";
}

void endCluster(raw_indented_ostream &os) {
  os.unindent();
  os << "}\n";
}

/// Draws one entry point: nodes first (inside their clusters), then the edges.
class EntryPrinter {
public:
  EntryPrinter(FuncOp func, raw_indented_ostream &os, unsigned &nextId)
      : func(func), os(os), nextId(nextId) {
    FailureOr<SymbolicShapeMap> inferred = inferSymbolicShapes(func, false);
    if (succeeded(inferred))
      shapes = std::move(*inferred);
  }

  void print() {
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttr);
      Value arg = func.getArgument(i);
      node(arg, {name ? name.str() : "input " + std::to_string(i), typeText(arg)},
           kInputStyle);
    }
    for (Operation &op : func.getBody().front())
      printOp(op);
    for (const std::string &edge : edges)
      os << edge << ";\n";
  }

private:
  void printOp(Operation &op) {
    if (auto parameter = dyn_cast<ParameterOp>(op)) {
      node(parameter.getResult(),
           {parameter.name().str(), typeText(parameter.getResult())}, kParameterStyle);
      return;
    }
    if (auto ret = dyn_cast<ReturnOp>(op)) {
      for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
        Value value = ret.getOperand(i);
        auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttr);
        std::string id =
            newNode({name ? name.str() : "output " + std::to_string(i), typeText(value)},
                    kOutputStyle);
        edge(value, id, "");
      }
      return;
    }
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      Operation *anchor = fusionAnchor(fusion);
      beginCluster(os, nextId++,
                   "kiln.fusion: " +
                       (anchor ? anchor->getName().getStringRef().str() : "elementwise"),
                   kGroupStyle);
      for (auto [arg, operand] :
           llvm::zip(fusion.getBody()->getArguments(), fusion.getOperands()))
        outside[arg] = operand;
      for (Operation &inner : fusion.getBody()->without_terminator())
        opNode(inner);
      endCluster(os);
      outside[fusion.getResult()] = fusion.yielded();
      return;
    }
    if (isa<AttentionOp>(op)) {
      beginCluster(os, nextId++, "kiln.attention", kAttentionStyle);
      opNode(op);
      endCluster(os);
      return;
    }
    opNode(op);
  }

  /// An op's node: its name, a state's or cache's name, a splat constant's value, its
  /// result's shape and dtype, its line of the model.
  void opNode(Operation &op) {
    std::vector<std::string> lines = {op.getName().getStringRef().str()};
    if (auto name = op.getAttrOfType<StringAttr>("name"))
      lines.push_back(name.str());
    if (auto constant = dyn_cast<ConstantOp>(op);
        constant && constant.value().isSplat()) {
      std::string text;
      llvm::raw_string_ostream(text)
          << "splat " << llvm::format("%g", constant.value().getSplatValue<float>());
      lines.push_back(text);
    }
    for (Value result : op.getResults())
      lines.push_back(typeText(result));
    // The user's line, then the nn module's line that built the op; a fused op
    // (attention, a packed projection) shows every line it came from.
    ModelLines where = modelLines(op.getLoc());
    for (const auto *list : {&where.user, &where.module})
      if (std::string text = lineText(*list); !text.empty())
        lines.push_back(text);
    std::string id = newNode(lines, "");
    for (Value result : op.getResults())
      ids[result] = id;
    auto attention = dyn_cast<AttentionOp>(op);
    for (OpOperand &operand : op.getOpOperands()) {
      // q, k and v often have one shape: only a label tells them apart.
      static const char *const roles[] = {"q", "k", "v", "mask"};
      edge(operand.get(), id, attention ? roles[operand.getOperandNumber()] : "");
    }
  }

  /// "[B, S, 512] f32", in the entry's dimension names where the shape rules know them.
  std::string typeText(Value value) const {
    auto type = value.getType().dyn_cast<RankedTensorType>();
    if (!type) {
      std::string text;
      llvm::raw_string_ostream(text) << value.getType();
      return text;
    }
    auto found = shapes.find(value);
    std::string text = toString(found != shapes.end() ? found->second : shapeOf(type));
    llvm::raw_string_ostream(text) << " " << type.getElementType();
    return text;
  }

  std::string newNode(llvm::ArrayRef<std::string> lines, StringRef attributes) {
    std::string id = "n" + std::to_string(nextId++);
    os << id << " [label = " << label(lines);
    if (!attributes.empty())
      os << ", " << attributes;
    os << "];\n";
    return id;
  }

  void node(Value value, llvm::ArrayRef<std::string> lines, StringRef attributes) {
    ids[value] = newNode(lines, attributes);
  }

  /// An edge from the node that computes `value` (seen through kiln.fusion bodies),
  /// written after every node.
  void edge(Value value, const std::string &to, StringRef role) {
    for (auto found = outside.find(value); found != outside.end();
         found = outside.find(value))
      value = found->second;
    std::string text = ids.lookup(value) + " -> " + to;
    if (!role.empty())
      text += " [label = " + quoted(role) + "]";
    edges.push_back(std::move(text));
  }

  FuncOp func;
  raw_indented_ostream &os;
  unsigned &nextId;
  SymbolicShapeMap shapes;
  /// The node of each value drawn.
  llvm::DenseMap<Value, std::string> ids;
  /// What a value inside a kiln.fusion stands for outside it: a body argument its
  /// operand, the group's result the yielded value.
  llvm::DenseMap<Value, Value> outside;
  std::vector<std::string> edges;
};

struct PrintGraphPass : public PrintGraphBase<PrintGraphPass> {
  void runOnOperation() override {
    if (failed(printGraphDot(getOperation(), llvm::outs(), entry)))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace

LogicalResult kiln::printGraphDot(ModuleOp module, llvm::raw_ostream &os,
                                  StringRef entry) {
  llvm::SmallVector<FuncOp> funcs;
  for (FuncOp func : module.getOps<FuncOp>())
    if (entry.empty() || func.getName() == entry)
      funcs.push_back(func);
  if (funcs.empty() && !entry.empty()) {
    InFlightDiagnostic error = module.emitError();
    error << "unknown entry point '" << entry << "'; the module's entry points are: ";
    llvm::interleaveComma(module.getOps<FuncOp>(), error,
                          [&](FuncOp func) { error << func.getName(); });
    return error;
  }

  raw_indented_ostream out(os);
  std::string modelName = module.getName() ? module.getName()->str() : "module";
  out << "digraph " << quoted(modelName) << " {\n";
  out.indent();
  out << "label = "
      << quoted(funcs.size() == 1 ? modelName + ": " + funcs.front().getName().str()
                                  : modelName)
      << ";\n";
  out << "labelloc = t;\n";
  out << "node [shape = box, style = \"rounded,filled\", fillcolor = white, "
         "fontsize = 10];\n";
  out << "edge [fontsize = 9];\n";
  unsigned nextId = 0;
  for (FuncOp func : funcs) {
    bool ownCluster = funcs.size() > 1;
    if (ownCluster)
      beginCluster(out, nextId++, "entry " + func.getName().str(), "style = dashed");
    EntryPrinter(func, out, nextId).print();
    if (ownCluster)
      endCluster(out);
  }
  out.unindent();
  out << "}\n";
  return success();
}

std::unique_ptr<Pass> kiln::createPrintGraphPass() {
  return std::make_unique<PrintGraphPass>();
}
