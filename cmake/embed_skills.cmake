# Turns every skills/<name>/SKILL.md under DIR (the built-in skills) into
# one C file OUT: a byte array per file and the table zc_builtin_skills[]
# of {folder, bytes, length}, ended by a row with a NULL folder.
# src/tools/skills.h declares it; skills.c parses and checks each file as
# it does a skill found on disk (tests/unit/test_skills.c checks them all).
file(GLOB files RELATIVE ${DIR} ${DIR}/*/SKILL.md)
list(SORT files)
set(arrays "")
set(rows "")
set(i 0)
foreach(rel ${files})
  get_filename_component(folder ${rel} DIRECTORY)
  if(NOT folder MATCHES "^[a-z0-9]+(-[a-z0-9]+)*$")
    message(FATAL_ERROR "embed_skills: the folder '${folder}' is not kebab-case")
  endif()
  file(READ ${DIR}/${rel} hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR len "${n} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
  string(APPEND arrays "/* ${rel} */\nstatic const unsigned char s${i}[] = {\n${body}0x00};\n")
  string(APPEND rows "\t{\"${folder}\", s${i}, ${len}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE ${OUT}.tmp "/* generated from ${DIR} by cmake/embed_skills.cmake; do not edit */\n#include \"tools/skills.h\"\n\n${arrays}\nconst struct zc_builtin_skill zc_builtin_skills[] = {\n${rows}\t{0, 0, 0},\n};\n")
file(RENAME ${OUT}.tmp ${OUT})
