// Fails when the hand-written source escapes the generated types: a cast
// (`x as T`, `<T>x`, `x!`), `any`, or a `@ts-` comment. Read with the
// TypeScript compiler's own parser.
import { readFileSync } from "node:fs";
import ts from "typescript";

let found = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const report = (node, what) => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart());
    console.error(`${file}:${line + 1}:${character + 1}: ${what}: ${node.getText()}`);
    found += 1;
  };
  const visit = (node) => {
    if (ts.isAsExpression(node) && !(ts.isTypeReferenceNode(node.type) && node.type.getText() === "const")) {
      report(node, "a cast");
    } else if (ts.isTypeAssertionExpression(node)) {
      report(node, "a cast");
    } else if (ts.isNonNullExpression(node)) {
      report(node, "a non-null assertion");
    } else if (node.kind === ts.SyntaxKind.AnyKeyword) {
      report(node, "any");
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (/@ts-(ignore|expect-error|nocheck)/.test(text)) {
    console.error(`${file}: a @ts- comment`);
    found += 1;
  }
}
process.exit(found === 0 ? 0 : 1);
