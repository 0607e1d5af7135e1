// Python bindings of the data service's micro-batch building (dataservice/microbatch_builder.h),
// for an in-process torch DataLoader doing the same work as the service's workers: the benchmark
// (scripts/data_service_bench.py) compares the two on the same plan.
//   tessera._tessera.MicroBatchBuilder(index, tokenizer, resize="fixed:336", patch=14)
//     .build(sample_ids) -> {"sample_ids", "token_ids", "text_lengths", "image_rows",
//                            "image_cols", "image_sample", "patches" (bytes)}
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/error.h"
#include "dataservice/microbatch_builder.h"
#include "formats/sample_index.h"

namespace tessera::python {

namespace {

class PyMicroBatchBuilder {
 public:
  PyMicroBatchBuilder(const std::string& index, const std::string& tokenizer, const std::string& resize, int patch)
      : samples_(read_sample_index(index)) {
    settings_.resize = parse_resize_policy(resize, patch);
    if (!tokenizer.empty()) {
      tokenizer_.emplace(TextTokenizer::load(tokenizer));
      settings_.tokenizer = &*tokenizer_;
    }
  }

  pybind11::dict build(const std::vector<std::int64_t>& ids) const {
    std::vector<TaskSample> task;
    for (std::int64_t id : ids) {
      if (id < 0 || id >= static_cast<std::int64_t>(samples_.size()))
        throw Error("sample_ids", "no sample " + std::to_string(id), "0 .. " + std::to_string(samples_.size() - 1));
      task.push_back({id, samples_[static_cast<std::size_t>(id)]});
    }
    BuiltMicroBatch b;
    {
      pybind11::gil_scoped_release release;  // decoding runs without the GIL
      b = build_microbatch(task, settings_);
    }
    pybind11::dict out;
    out["sample_ids"] = b.sample_ids;
    out["token_ids"] = b.token_ids;
    out["text_lengths"] = b.text_lengths;
    out["image_rows"] = b.image_rows;
    out["image_cols"] = b.image_cols;
    out["image_sample"] = b.image_sample;
    out["patches"] = pybind11::bytes(reinterpret_cast<const char*>(b.patches.data()), b.patches.size());
    return out;
  }

 private:
  std::vector<IndexedSample> samples_;
  std::optional<TextTokenizer> tokenizer_;
  BuildSettings settings_;
};

}  // namespace

void bind_dataservice(pybind11::module_& m) {
  pybind11::class_<PyMicroBatchBuilder>(m, "MicroBatchBuilder")
      .def(pybind11::init<const std::string&, const std::string&, const std::string&, int>(), pybind11::arg("index"),
           pybind11::arg("tokenizer"), pybind11::arg("resize") = "fixed:336", pybind11::arg("patch") = 14)
      .def("build", &PyMicroBatchBuilder::build, pybind11::arg("sample_ids"));
}

}  // namespace tessera::python
