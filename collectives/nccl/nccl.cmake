# NCCL backend. The loader, ABI declarations and TUNING-log parser need no CUDA and are always
# built (so `commbench version` can report libnccl); the backend, device memory, CUDA-event timer
# and validation kernels are built when the CUDA toolkit is found, the runtime linked statically.
# Without CUDA, no_cuda.cpp keeps the nccl entry, which then says it was built without CUDA.
target_sources(cb_collectives PRIVATE
  nccl/nccl_abi.cpp
  nccl/comm_registry.cpp
  nccl/cuda_requirements.cpp
  nccl/device_selection.cpp
  nccl/env_slot.cpp
  nccl/nccl_policy.cpp
  nccl/nccl_algorithms.cpp
  nccl/nccl_choices.cpp
  nccl/nccl_info.cpp
  nccl/nccl_library.cpp
  nccl/nccl_tuning.cpp
  nccl/tuning_capture.cpp
  nccl/tuning_log.cpp
  mpi/mpi_cuda_aware.cpp
)
target_link_libraries(cb_collectives PUBLIC ${CMAKE_DL_LIBS})
if(COMMBENCH_HAVE_CUDA)
  target_sources(cb_collectives PRIVATE
    nccl/cuda_device.cpp
    nccl/event_timer.cpp
    nccl/nccl_backend.cpp
    nccl/nccl_comm.cpp
  )
  # The kernels need nothing newer than C++17, which every nvcc this CMake knows accepts.
  add_library(cb_cuda_kernels STATIC nccl/validation_kernels.cu)
  set_target_properties(cb_cuda_kernels PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  target_link_libraries(cb_cuda_kernels PUBLIC CUDA::cudart_static)
  target_link_libraries(cb_collectives PUBLIC cb_cuda_kernels CUDA::cudart_static)
else()
  target_sources(cb_collectives PRIVATE nccl/no_cuda.cpp)
endif()
