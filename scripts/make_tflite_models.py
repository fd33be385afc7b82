"""Builds the int8 TensorFlow Lite test models in tests/data/tflite (run by
hand; the outputs are committed).

Needs tensorflow-cpu from PyPI, which nothing else of the project uses (it
is not in requirements.txt): make a virtual environment of its own and run
the script from the repository root:

    python3 -m venv /tmp/tf && /tmp/tf/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tf/bin/python scripts/make_tflite_models.py

Every model has random weights (Keras' initializers under a fixed seed;
nothing is downloaded) and is quantized in full to int8 by TFLiteConverter:
int8 weights and activations, int8 input and output, calibrated on random
inputs of a fixed seed. The networks are MLPerf Tiny's four reference
networks (their shapes, not their trained weights), a small U-Net with skip
connections, a decoder of transposed convolutions and a network of parallel
branches.
"""

import os
import sys

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "tflite"
)


def conv_bn(x, filters, kernel, strides=1, relu=True):
    x = layers.Conv2D(filters, kernel, strides, padding="same")(x)
    x = layers.BatchNormalization()(x)
    return layers.ReLU()(x) if relu else x


def resnet8():
    """MLPerf Tiny image classification: ResNet-8 on CIFAR-10 (32x32x3)."""
    inputs = keras.Input((32, 32, 3), batch_size=1)
    x = conv_bn(inputs, 16, 3)
    for filters, strides in ((16, 1), (32, 2), (64, 2)):
        y = conv_bn(x, filters, 3, strides)
        y = conv_bn(y, filters, 3, relu=False)
        if strides != 1:
            x = layers.Conv2D(filters, 1, strides)(x)
        x = layers.ReLU()(layers.Add()([x, y]))
    x = layers.AveragePooling2D(pool_size=8)(x)
    x = layers.Dense(10)(layers.Flatten()(x))
    return keras.Model(inputs, layers.Softmax()(x))


def ds_cnn():
    """MLPerf Tiny keyword spotting: DS-CNN on 49x10 MFCC features."""
    inputs = keras.Input((49, 10, 1), batch_size=1)
    x = conv_bn(inputs, 64, (10, 4), strides=2)
    for _ in range(4):
        x = layers.DepthwiseConv2D(3, padding="same")(x)
        x = layers.ReLU()(layers.BatchNormalization()(x))
        x = conv_bn(x, 64, 1)
    x = layers.AveragePooling2D(pool_size=(25, 5))(x)
    x = layers.Dense(12)(layers.Flatten()(x))
    return keras.Model(inputs, layers.Softmax()(x))


def mobilenet_vww():
    """MLPerf Tiny visual wake words: MobileNetV1 0.25 at 96x96x3."""
    inputs = keras.Input((96, 96, 3), batch_size=1)
    x = conv_bn(inputs, 8, 3, strides=2)
    blocks = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2)]
    blocks += [(128, 1)] * 5 + [(256, 2), (256, 1)]
    for filters, strides in blocks:
        x = layers.DepthwiseConv2D(3, strides, padding="same")(x)
        x = layers.ReLU()(layers.BatchNormalization()(x))
        x = conv_bn(x, filters, 1)
    x = layers.AveragePooling2D(pool_size=3)(x)
    x = layers.Dense(2)(layers.Flatten()(x))
    return keras.Model(inputs, layers.Softmax()(x))


def autoencoder():
    """MLPerf Tiny anomaly detection: the fully connected autoencoder on 640
    log-mel features (5 frames of 128)."""
    inputs = keras.Input((640,), batch_size=1)
    x = inputs
    for units in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = layers.Dense(units)(x)
        x = layers.ReLU()(layers.BatchNormalization()(x))
    return keras.Model(inputs, layers.Dense(640)(x))


def unet():
    """A small U-Net: three levels; each skip connection goes through a 1x1
    convolution and is concatenated after a 2x2 up-convolution (a strided
    transposed convolution)."""
    inputs = keras.Input((64, 64, 3), batch_size=1)
    skips, x = [], inputs
    for filters in (4, 8, 16):
        x = conv_bn(conv_bn(x, filters, 3), filters, 3)
        skips.append(x)
        x = layers.MaxPooling2D()(x)
    x = conv_bn(x, 32, 3)
    for filters, skip in zip((16, 8, 4), reversed(skips)):
        x = layers.Conv2DTranspose(filters, 2, 2)(x)
        skip = conv_bn(skip, 2 * filters, 1)
        x = layers.Concatenate()([x, skip])
        x = conv_bn(conv_bn(x, filters, 3), filters, 3)
    return keras.Model(inputs, layers.Conv2D(2, 1)(x))


def transpose_conv():
    """A decoder of strided transposed convolutions (TRANSPOSE_CONV, whose
    int8 kernel asks TFLM for scratch memory)."""
    inputs = keras.Input((8, 8, 16), batch_size=1)
    x = conv_bn(inputs, 32, 3)
    for filters in (16, 8):
        x = layers.Conv2DTranspose(filters, 3, 2, padding="same")(x)
        x = layers.ReLU()(layers.BatchNormalization()(x))
    return keras.Model(inputs, layers.Conv2D(3, 3, padding="same")(x))


def branches():
    """An Inception-style network: in each block three branches (1x1
    expansion, depthwise k x k, 1x1 projection; k = 1, 3, 5) and a pooling
    branch, joined by concatenation and a residual addition; then a global
    mean."""
    inputs = keras.Input((32, 32, 3), batch_size=1)
    x = conv_bn(inputs, 16, 3, strides=2)
    for _ in range(2):
        outputs = []
        for kernel in (1, 3, 5):
            y = conv_bn(x, 48, 1)
            y = layers.DepthwiseConv2D(kernel, padding="same")(y)
            outputs.append(conv_bn(y, 8, 1))
        y = layers.AveragePooling2D(3, 1, padding="same")(x)
        outputs.append(conv_bn(y, 8, 1))
        y = conv_bn(layers.Concatenate()(outputs), 16, 1, relu=False)
        x = layers.ReLU()(layers.Add()([x, y]))
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(10)(x)
    return keras.Model(inputs, layers.Softmax()(x))


MODELS = {
    "resnet8": resnet8,
    "ds_cnn": ds_cnn,
    "mobilenet_vww": mobilenet_vww,
    "autoencoder": autoencoder,
    "unet": unet,
    "transpose_conv": transpose_conv,
    "branches": branches,
}


def randomize_batch_norm(model, rng):
    """Gives every batch norm random statistics, so that the folded
    weights are not those of an identity."""
    for layer in model.layers:
        if isinstance(layer, layers.BatchNormalization):
            gamma, beta, mean, var = layer.get_weights()
            layer.set_weights(
                [
                    rng.uniform(0.5, 1.5, gamma.shape).astype(np.float32),
                    rng.normal(0, 0.1, beta.shape).astype(np.float32),
                    rng.normal(0, 0.1, mean.shape).astype(np.float32),
                    rng.uniform(0.5, 1.5, var.shape).astype(np.float32),
                ]
            )


def convert(model, seed):
    """Full int8 quantization, calibrated on random inputs."""
    shape = (1,) + tuple(model.input_shape[1:])

    def representative():
        rng = np.random.default_rng(seed)
        for _ in range(32):
            yield [rng.uniform(-1, 1, shape).astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    return converter.convert()


def main(names):
    os.makedirs(OUT, exist_ok=True)
    for seed, (name, build) in enumerate(MODELS.items()):
        if names and name not in names:
            continue
        keras.utils.set_random_seed(seed)
        model = build()
        randomize_batch_norm(model, np.random.default_rng(seed))
        data = convert(model, seed)
        path = os.path.join(OUT, name + ".tflite")
        with open(path, "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
