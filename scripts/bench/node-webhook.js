// A mutating admission webhook written the obvious way with Node's https module, a baseline of
// scripts/bench/compare.sh: decode the AdmissionReview, answer it with a two-operation JSON patch
// (a label and an annotation), TLS 1.3 only.
//   node node-webhook.js TLS_CERT TLS_KEY PORT_FILE
'use strict';
const fs = require('fs');
const https = require('https');

const [cert, key, portFile] = process.argv.slice(2);

function handle(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let review;
    try {
      review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (e) {
      res.writeHead(400).end('invalid admission review');
      return;
    }
    if (!review || !review.request) {
      res.writeHead(400).end('invalid admission review');
      return;
    }
    const meta = (review.request.object && review.request.object.metadata) || {};
    const ops = [
      meta.labels
        ? {op: 'add', path: '/metadata/labels/bench~1injected', value: 'true'}
        : {op: 'add', path: '/metadata/labels', value: {'bench/injected': 'true'}},
      meta.annotations
        ? {op: 'add', path: '/metadata/annotations/bench~1by', value: 'node'}
        : {op: 'add', path: '/metadata/annotations', value: {'bench/by': 'node'}},
    ];
    const body = JSON.stringify({
      apiVersion: review.apiVersion,
      kind: review.kind,
      response: {
        uid: review.request.uid,
        allowed: true,
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify(ops)).toString('base64'),
      },
    });
    res.writeHead(200, {'Content-Type': 'application/json'}).end(body);
  });
}

const server = https.createServer(
    {cert: fs.readFileSync(cert), key: fs.readFileSync(key), minVersion: 'TLSv1.3'}, handle);
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
