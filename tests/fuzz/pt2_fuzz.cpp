// Fuzz target: load_exported() of torch.export archives, then one forward of what loads. An
// input that starts with "PK" is the .pt2 file itself (the zip reader, damaged members and CRCs);
// any other input is a models/model.json, which the target stores in an archive beside a fixed
// weights config (one [2, 2] float32 weight "w" of 16 bytes), so mutations reach the JSON reader,
// the signature, the interpreter's argument readers and the shape checks instead of failing a
// CRC. A refusal must be a locus::Error.
#include "locus/locus.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/zip_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.rfind("PK", 0) != 0) {
    const std::string config = R"({"config": {"w": {"path_name": "weight_0", "is_param": true, "use_pickle": false,
        "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 2}], "requires_grad": true,
        "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 2}, {"as_int": 1}],
        "storage_offset": {"as_int": 0}, "layout": 7}}}})";
    bytes = locus::testing::zip({{"m/archive_format", "pt2"},
                                 {"m/byteorder", "little"},
                                 {"m/models/model.json", bytes},
                                 {"m/data/weights/model_weights_config.json", config},
                                 {"m/data/weights/weight_0", std::string(16, '\x3f')}});
  }
  const std::string& path = locus::fuzz::input_file(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  try {
    locus::nn::ExportedModule m = locus::load_exported(path);
    std::vector<locus::Tensor> inputs;
    for (size_t k = 0; k < m->input_names().size(); ++k) inputs.push_back(locus::ones({2, 2}));
    m->forward(inputs);
  } catch (const locus::Error&) {
  }
  return 0;
}
