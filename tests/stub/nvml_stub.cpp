// A stand-in for libnvidia-ml.so.1, for the tests only (loaded through CCPACK_NVML_LIBRARY): the GPU it reports
// comes from environment variables, so a test without a GPU can be any machine.
//   STUB_NVML_COUNT (default 1), STUB_NVML_NAME (default "NVIDIA H200"), STUB_NVML_CC (default "9.0"),
//   STUB_NVML_DRIVER (default "580.159.04"), STUB_NVML_SMS (unset: the attributes call is "not supported", as on
//   drivers that answer it only for MIG devices), STUB_NVML_INIT_FAIL (set: nvmlInit_v2 fails).
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

int copy_out(const char* text, char* out, unsigned length) {
  if (std::strlen(text) + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(out, text);
  return 0;
}

struct Attributes {
  unsigned multiprocessorCount, a, b, c, d, e, f, g;
  unsigned long long memorySizeMB;
};

int device_tag = 0;

}  // namespace

extern "C" {

int nvmlInit_v2() { return std::getenv("STUB_NVML_INIT_FAIL") ? 9 : 0; }  // 9: NVML_ERROR_DRIVER_NOT_LOADED
int nvmlShutdown() { return 0; }
int nvmlSystemGetDriverVersion(char* out, unsigned length) {
  return copy_out(env_or("STUB_NVML_DRIVER", "580.159.04"), out, length);
}
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(std::atoi(env_or("STUB_NVML_COUNT", "1")));
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned, void** device) {
  *device = &device_tag;
  return 0;
}
int nvmlDeviceGetName(void*, char* out, unsigned length) {
  return copy_out(env_or("STUB_NVML_NAME", "NVIDIA H200"), out, length);
}
int nvmlDeviceGetCudaComputeCapability(void*, int* major, int* minor) {
  return std::sscanf(env_or("STUB_NVML_CC", "9.0"), "%d.%d", major, minor) == 2 ? 0 : 3;
}
int nvmlDeviceGetAttributes_v2(void*, Attributes* attr) {
  const char* sms = std::getenv("STUB_NVML_SMS");
  if (!sms) return 3;  // NVML_ERROR_NOT_SUPPORTED
  attr->multiprocessorCount = static_cast<unsigned>(std::atoi(sms));
  return 0;
}
}
