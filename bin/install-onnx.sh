#!/usr/bin/env bash
# Installs the optional ONNX runtime (dense recall, about 290 MB) beside the checkout, in
# .onnx/, and links it into node_modules. npm leaves an optional peer package out of
# `npm install`, and `npm install --no-save` of one does nothing, hence this.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-1.30}"
# Its install script would download GPU files (and fails offline); the CPU runtime ships in the package.
export ONNXRUNTIME_NODE_INSTALL=skip
if [ -d node_modules/onnxruntime-node ] && [ ! -L node_modules/onnxruntime-node ]; then
  echo "onnxruntime-node is already installed in node_modules"
  exit 0
fi
mkdir -p .onnx node_modules
npm install --prefix .onnx --no-audit --no-fund --no-save "onnxruntime-node@~${version}"
ln -sfn "../.onnx/node_modules/onnxruntime-node" node_modules/onnxruntime-node
node -e "import('onnxruntime-node').then(() => console.log('onnxruntime-node ${version} is installed: dense recall can be turned on (memory.embedding.onnxDir)'))"
