// json-object-grammar.ts: the grammar of response_format { type: 'json_object' }: one JSON object, any
// members, written compactly (no whitespace between tokens, ',' and ':' as separators), in XGrammar's EBNF.
//
// Not XGrammar's builtin JSON grammar, which (0.1.27) also accepts a top-level array and any amount of
// whitespace between tokens ('{"a":\n\n\n1}'): OpenAI's json_object promises an object, and small models,
// once whitespace is allowed, can spend every remaining token on newlines. Strings follow RFC 8259 (no raw
// control characters; escapes \" \\ \/ \b \f \n \r \t \uXXXX); numbers are RFC 8259 numbers.
//
// The rules copy the shape of XGrammar's own JSON rules (its schema converter's basic_string_sub): a string
// is one right-recursive rule that ends with its closing quote, followed by a lookahead for what may come
// next. That shape is what lets XGrammar precompute the mask inside a string: written as "\"" char* "\"",
// the same language took 29 ms per mask there with SmolVLM's vocabulary, against under 0.1 ms.

export const JSON_OBJECT_EBNF = String.raw`root ::= object
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" "}" | "{" string ":" value ("," string ":" value)* "}"
array ::= "[" "]" | "[" value ("," value)* "]"
string ::= "\"" string_sub
string_sub ::= ("\"" | [^\0-\x1f\"\\\r\n] string_sub | "\\" escape string_sub) (= [,}\]:])
escape ::= ["\\/bfnrt] | "u" [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9]
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+\-]? [0-9]+)?
`;
