# Per-target compile settings shared by every simtrainer target.
function(simtrainer_target_options target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wimplicit-fallthrough -Wvla -Wnon-virtual-dtor -Woverloaded-virtual
    # Determinism: no fused multiply-add contraction, never -ffast-math.
    -ffp-contract=off)
  if(SIMTRAINER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(SIMTRAINER_SANITIZE STREQUAL "thread")
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
    # GCC 12's libtsan misses pthread_mutex_clocklock, which Fast DDS 2.9 locks most of its mutexes
    # with: every executable defines and exports a forwarder that TSan sees (the file says why).
    get_target_property(_type ${target} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/sanitizers/tsan_clocklock.cpp)
      target_link_options(${target} PRIVATE -Wl,--export-dynamic-symbol=pthread_mutex_clocklock)
    endif()
  elseif(SIMTRAINER_SANITIZE)
    # Address and undefined behaviour; a finding of either stops the program (halt on error).
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# simtrainer_add_library(NAME SOURCES...): a subsystem library with public headers in
# NAME/include/NAME/, internals in NAME/src/ (private), the alias simtrainer::NAME and the shared
# compile options. Dependencies are linked by the caller.
function(simtrainer_add_library name)
  add_library(${name} STATIC ${ARGN})
  add_library(simtrainer::${name} ALIAS ${name})
  target_include_directories(${name}
    PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  simtrainer_target_options(${name})
endfunction()
