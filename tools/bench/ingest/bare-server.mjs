// The baseline: a bare node:http server that reads the body and answers 200.
import http from "node:http";
const server = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
});
server.listen(Number(process.argv[2]), "127.0.0.1", () => process.stdout.write("bare ready\n"));
