// Syntax errors in rule files stop at the first one, located at the offending token,
// with the tokens that could have come there.

// RUN: not irc-rules %S/Inputs/missing-semicolon.rules 2>&1 | FileCheck %s --check-prefix=SEMI
// SEMI: missing-semicolon.rules:4:3: error: unexpected 'replace'
// SEMI-NEXT: hint: expected {{.*}}';'

// RUN: not irc-rules %S/Inputs/unclosed-rule.rules 2>&1 | FileCheck %s --check-prefix=EOF
// EOF: unclosed-rule.rules:4:1: error: unexpected the end of the file
// EOF-NEXT: hint: expected '}'

// RUN: not irc-rules %S/Inputs/bad-character.rules 2>&1 | FileCheck %s --check-prefix=CHAR
// CHAR: bad-character.rules:2:24: error: unexpected character '%'
// CHAR-NEXT: hint: expected {{.*}}a capture ($name)

// RUN: not irc-rules %S/Inputs/no-such-file.rules 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: {{.*}}no-such-file.rules: error: cannot read the rule file: No such file or directory
// MISSING-NEXT: hint: give a path to a .rules file, or the name of a shipped one
