# Fails when a source file includes a header of a higher layer (ARCHITECTURE.md, "Layers"):
#   core <- runtime <- ops, autograd (beside each other) <- backends (implementing ops' kernel
#   table) <- nn / optim / data / serialize / interop <- tools
# and when a CUDA header is included outside src/backends/cuda (save nccl.h in the NCCL engine of
# src/distributed/nccl), or a backend header outside
# src/backends. It also fails when a front end in src/ops, src/nn, src/optim or src/amp takes an
# address out of a tensor other than through src/ops/kernel_operand.h, which says whether the
# kernel is handed strides or needs dense memory (Note [Kernel operands]), and when a file above
# ops (nn, optim, amp, data, serialize, interop, distributed, tools) includes the op path's
# internals, which only src/ops and the backends see: the kernel table and registry, the fused
# entries, the operand binding, the builders and the dispatch helpers (Note [One recipe]). Run as `cmake -DLOCUS_SOURCE_DIR=<repo> -P cmake/CheckLayers.cmake` (a test
# does, and so does every configure).

cmake_policy(SET CMP0057 NEW)  # if(IN_LIST), when run with -P

set(rank_core 0)
set(rank_runtime 1)
set(rank_ops 2)
set(rank_autograd 2)
set(rank_backends 3)
set(rank_nn 4)
set(rank_optim 4)
set(rank_data 4)
set(rank_serialize 4)
set(rank_interop 4)
set(rank_amp 4)
set(rank_distributed 4)

file(GLOB_RECURSE sources RELATIVE "${LOCUS_SOURCE_DIR}"
     "${LOCUS_SOURCE_DIR}/src/*.h" "${LOCUS_SOURCE_DIR}/src/*.cpp" "${LOCUS_SOURCE_DIR}/src/*.cu"
     "${LOCUS_SOURCE_DIR}/src/*.cuh" "${LOCUS_SOURCE_DIR}/src/*.in"
     "${LOCUS_SOURCE_DIR}/include/*.h" "${LOCUS_SOURCE_DIR}/tools/*.cpp" "${LOCUS_SOURCE_DIR}/tools/*.h")
# The op path's internals (Note [One recipe] in src/ops/structured_call.h): above ops, code
# calls the ops front ends (src/ops/<op>.h) and never a kernel.
set(op_internals kernel_table kernel_registry fused kernel_operand structured_call elementwise_call strided_iter dispatch)
set(above_ops nn optim amp data serialize interop distributed tools)
set(violations "")
foreach(source IN LISTS sources)
  if(source MATCHES "^src/([a-z_]+)/")
    set(layer "${CMAKE_MATCH_1}")
  elseif(source MATCHES "^tools/")
    set(layer "tools")
  else()
    set(layer "public")
  endif()
  if(layer MATCHES "^(ops|nn|optim|amp)$" AND NOT source MATCHES "^src/ops/kernel_operand\\.")
    file(STRINGS "${LOCUS_SOURCE_DIR}/${source}" raw_addresses REGEX "data_ptr[<(]")
    foreach(line IN LISTS raw_addresses)
      string(STRIP "${line}" line)
      string(APPEND violations "  ${source}: ${line} (bind kernel operands through src/ops/kernel_operand.h)\n")
    endforeach()
  endif()
  file(STRINGS "${LOCUS_SOURCE_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    if(line MATCHES "#[ \t]*include[ \t]*[<\"]nccl" AND source MATCHES "^src/distributed/nccl/")
      # The NCCL engine of the process groups: NCCL's header, nothing else of CUDA's.
    elseif(line MATCHES "#[ \t]*include[ \t]*[<\"](cuda|cublas|nccl|cub/)" AND NOT source MATCHES "^src/backends/cuda/")
      string(APPEND violations "  ${source}: ${line} (CUDA headers belong to src/backends/cuda)\n")
    endif()
    if(line MATCHES "#[ \t]*include[ \t]*\"src/ops/([a-z_]+)\\.h\"" AND layer IN_LIST above_ops)
      if(CMAKE_MATCH_1 IN_LIST op_internals)
        string(APPEND violations "  ${source}: ${line} (above ops, call the op's front end: src/ops/${CMAKE_MATCH_1}.h is the op path's own)\n")
      endif()
    endif()
    if(NOT line MATCHES "#[ \t]*include[ \t]*\"src/([a-z_]+)/")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    if(layer STREQUAL "public")
      string(APPEND violations "  ${source}: ${line} (public headers include only public headers)\n")
    elseif(target STREQUAL "backends" AND NOT layer STREQUAL "backends")
      string(APPEND violations "  ${source}: ${line} (backends are named only in src/backends)\n")
    elseif(layer STREQUAL "backends" AND target STREQUAL "autograd")
      string(APPEND violations "  ${source}: ${line} (kernels never record a graph)\n")
    elseif(NOT layer STREQUAL "tools" AND DEFINED rank_${target} AND DEFINED rank_${layer})
      if(rank_${target} GREATER rank_${layer})
        string(APPEND violations "  ${source}: ${line} (${layer} is below ${target})\n")
      endif()
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "Layering violations (a lower layer includes a higher one, or a raw address for a kernel):\n${violations}")
endif()
message(STATUS "Layering: ${CMAKE_CURRENT_LIST_FILE} found no include of a higher layer")
