#!/usr/bin/env bash
# Network layers this project does not hold (bench/newnets/layers/<network>.csv), for the last step of issue #12:
# the shipped models measured again on layers of networks that are in no catalog (predictor/data/networks), not
# among the held-out networks (bench/holdout/layers) and in no sweep's training set; batch 1, 8, 32, written by the
# user's own path, `python -m predictor.layers` (needs torch + torchvision, `pip install '.[layers]'`, and timm).
#   bash scripts/make_newnets_layers.sh            # torch 2.14.1, torchvision 0.29.1, timm 1.0.31 wrote the files
# Chosen (session 48) from 28 candidates for the share of their fp16-eligible layer shapes that no sweep holds
# (1x1 / 3x3 shapes of fcn_resnet101 and keypointrcnn_resnet50_fpn are all in the sweeps already, so they were dropped):
# detector backbones at 640 px (CSPDarknet-M as in YOLOv5/v8, Darknet-53), classifiers (DenseNet-161,
# EfficientNet-V2-M at 480 px, EfficientNet-B7 at 600 px, GENet-M, HGNet-tiny, Inception-ResNet-v2, NF-ResNet-50,
# RegNetY-16GF, SelecSLS-42b, Xception-41) and conv / attention hybrids (MobileViTv2, Next-ViT-S, PVTv2-B2,
# EfficientFormer-L1).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/write_layers.sh bench/newnets/layers <<'LIST'
timm:cs3darknet_m 640
timm:darknet53 640
timm:densenet161 224
torchvision:efficientnet_v2_m 480
torchvision:efficientnet_b7 600
timm:gernet_m 256
timm:hgnet_tiny 224
timm:inception_resnet_v2 299
timm:nf_resnet50 256
torchvision:regnet_y_16gf 224
timm:selecsls42b 224
timm:xception41 299
timm:mobilevitv2_100 256
timm:nextvit_small 224
timm:pvt_v2_b2 224
timm:efficientformer_l1 224
LIST
