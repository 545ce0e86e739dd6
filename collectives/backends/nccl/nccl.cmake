# NCCL backend. The loader, ABI declarations and TUNING-log parser need no CUDA and are always
# built (so `commbench version` can report libnccl); the backend, device memory, CUDA-event timer
# and validation kernels are built when the CUDA toolkit is found, the runtime linked statically.
# Without CUDA, no_cuda.cpp keeps the nccl entry, which then says it was built without CUDA.
target_sources(cb_collectives PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/nccl_abi.cpp
  ${CMAKE_CURRENT_LIST_DIR}/comm_registry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_requirements.cpp
  ${CMAKE_CURRENT_LIST_DIR}/device_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/env_slot.cpp
  ${CMAKE_CURRENT_LIST_DIR}/event_stamps.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_algorithms.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_choices.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_entry.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_info.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_library.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_tuning.cpp
  ${CMAKE_CURRENT_LIST_DIR}/p2p_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuning_capture.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tuning_log.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unique_id.cpp
  ${CMAKE_CURRENT_LIST_DIR}/../mpi/mpi_cuda_aware.cpp
)
target_link_libraries(cb_collectives PUBLIC ${CMAKE_DL_LIBS})
if(COMMBENCH_HAVE_CUDA)
  target_sources(cb_collectives PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/cuda_device.cpp
    ${CMAKE_CURRENT_LIST_DIR}/event_timer.cpp
    ${CMAKE_CURRENT_LIST_DIR}/nccl_backend.cpp
    ${CMAKE_CURRENT_LIST_DIR}/nccl_comm.cpp
    ${CMAKE_CURRENT_LIST_DIR}/nccl_peer_messages.cpp
    ${CMAKE_CURRENT_LIST_DIR}/nccl_step.cpp
  )
  # The kernels need nothing newer than C++17, which every nvcc this CMake knows accepts.
  add_library(cb_cuda_kernels STATIC ${CMAKE_CURRENT_LIST_DIR}/validation_kernels.cu
              ${CMAKE_CURRENT_LIST_DIR}/spin_kernel.cu)
  set_target_properties(cb_cuda_kernels PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  target_link_libraries(cb_cuda_kernels PUBLIC CUDA::cudart_static)
  target_link_libraries(cb_collectives PUBLIC cb_cuda_kernels CUDA::cudart_static)
else()
  target_sources(cb_collectives PRIVATE ${CMAKE_CURRENT_LIST_DIR}/no_cuda.cpp)
endif()
