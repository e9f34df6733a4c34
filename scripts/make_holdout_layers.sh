#!/usr/bin/env bash
# The held-out network layers (bench/holdout/layers/<network>.csv): conv layers of 14 networks that are
# in no sweep's catalog (predictor/data/networks) and in no training set, batch 1, 8, 32, written by the
# user's own path, `python -m predictor.layers` (needs torch + torchvision, `pip install '.[layers]'`, and timm).
#   bash scripts/make_holdout_layers.sh            # torch 2.14.1, torchvision 0.29.1, timm 1.0.31 wrote the files
# Chosen to be unlike the catalog: MNASNet, MobileNetV3-small, RegNetX-8GF, EfficientNet-B5 (456 px), MaxViT-T,
# AlexNet (5x5 / 11x11), HRNet-W32 (512 px), DLA-34, VoVNet-39, RepVGG-A2, ResNet-50-D (deep stem),
# MobileViT-S, DeepLabV3-MobileNetV3 at 1024x2048, SSDlite320.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/write_layers.sh bench/holdout/layers <<'LIST'
torchvision:mnasnet1_0 224
torchvision:mobilenet_v3_small 224
torchvision:regnet_x_8gf 224
torchvision:efficientnet_b5 456
torchvision:maxvit_t 224
torchvision:alexnet 224
torchvision:deeplabv3_mobilenet_v3_large 1024x2048
torchvision:ssdlite320_mobilenet_v3_large 320
timm:hrnet_w32 512
timm:dla34 224
timm:ese_vovnet39b 224
timm:repvgg_a2 224
timm:resnet50d 224
timm:mobilevit_s 256
LIST
