# Warning flags and sanitizers for Baton's own targets. Always PRIVATE: users of Baton::baton
# never inherit them.
function(baton_private_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  endif()
  baton_sanitize(${target})
endfunction()

function(baton_sanitize target)
  if(BATON_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${BATON_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${BATON_SANITIZE})
  endif()
endfunction()
