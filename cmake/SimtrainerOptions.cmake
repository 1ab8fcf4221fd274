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
  if(SIMTRAINER_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()
