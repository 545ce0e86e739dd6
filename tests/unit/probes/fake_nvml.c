/* A test double of libnvidia-ml for machines without a GPU driver: two GPUs joined by three
 * active NVLinks (GPU 0's link 2 is down, links 4-5 are not supported, 6 is past the end).
 * Built with FAKE_OMIT_PCI it lacks nvmlDeviceGetPciInfo_v3, as a too-old library would. */
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef void* nvmlDevice_t;

static int devices[2];
static const char* bus_ids[2] = {"00000000:1A:00.0", "00000000:1B:00.0"};

static int index_of(nvmlDevice_t d) {
  return (int*)d == &devices[0] ? 0 : 1;
}

nvmlReturn_t nvmlInit_v2(void) {
  return 0;
}
nvmlReturn_t nvmlShutdown(void) {
  return 0;
}
const char* nvmlErrorString(nvmlReturn_t rc) {
  return rc ? "Fake error" : "Success";
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* v, unsigned n) {
  snprintf(v, n, "999.1");
  return 0;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 2;
  return 0;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i > 1) return 2;
  *d = &devices[i];
  return 0;
}
#ifndef FAKE_OMIT_PCI
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  memset(p, 0, sizeof *p);
  strcpy(p->busId, bus_ids[index_of(d)]);
  return 0;
}
#endif
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned n) {
  snprintf(name, n, "Fake GPU %d", index_of(d));
  return 0;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned n) {
  snprintf(uuid, n, "GPU-fake-%d", index_of(d));
  return 0;
}
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned words, unsigned long* mask) {
  memset(mask, 0, words * sizeof *mask);
  mask[0] = index_of(d) ? 0xf0UL : 0x0fUL;
  if (words > 1) mask[1] = 1UL; /* CPU 64 */
  return 0;
}
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned* node) {
  (void)d;
  (void)node;
  return 3; /* NOT_SUPPORTED */
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  (void)d;
  *major = 9;
  *minor = 0;
  return 0;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  if (link >= 6) return 2; /* INVALID_ARGUMENT: no such link */
  if (link >= 4) return 3; /* NOT_SUPPORTED */
  *active = !(index_of(d) == 0 && link == 2);
  return 0;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned link, nvmlPciInfo_t* p) {
  (void)link;
  memset(p, 0, sizeof *p);
  strcpy(p->busId, bus_ids[1 - index_of(d)]);
  return 0;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned link, int* type) {
  (void)d;
  (void)link;
  *type = 0; /* GPU */
  return 0;
}
