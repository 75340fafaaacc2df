/* lexer_codes.h: token codes the lexer returns besides Lemon's. */
#ifndef WG_LEXER_CODES_H
#define WG_LEXER_CODES_H
enum { LEX_NEWLINE = 1000, LEX_BAD = 1001, LEX_UNTERMINATED = 1002 };
#endif
